// The app's Content-Security-Policy, shared by the release build
// (harden-dist.mjs) and the run command's build (assemble-app.mjs): no inline
// script but those allowed by hash, no eval; wasm compiles ('wasm-unsafe-eval');
// styles only from our stylesheet; the reviewer may point the app at any backend
// or LangGraph server, so fetches may go to https origins and to this machine.
// `countersign serve` sends the page's policy as a header, with frame-ancestors.

/** The policy, allowing the inline scripts whose `'sha256-…'` sources are given. */
export function appPolicy(inlineScripts) {
  return [
    "default-src 'self'",
    ["script-src 'self'", ...inlineScripts, "'wasm-unsafe-eval'"].join(" "),
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self' https: http://127.0.0.1:* http://localhost:*",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "manifest-src 'self'",
  ].join("; ");
}
