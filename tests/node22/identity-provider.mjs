// A real OpenID provider for the sign-in tests: `oidc-provider` (a certified
// implementation) on 127.0.0.1, with its development login form, a
// confidential client for Countersign, and accounts whose groups a test can
// change or disable while they are signed in. A test can also make the token
// endpoint answer with an ID token that is wrong in one way (signature,
// issuer, audience, expiry), signed with the provider's own key where the
// fault is not the signature, or the browser come back with another
// issuer's `iss` (a mix-up), to see Countersign refuse it.
//
//   node identity-provider.mjs REDIRECT_URL   (prints "issuer: URL" when ready)
//   POST /test/accounts/ID {groups?, disabled?}   POST /test/tamper {mode}
//   GET /test/refreshes   (how many refresh-token grants it has answered)
import { generateKeyPair, exportJWK, SignJWT, decodeJwt, decodeProtectedHeader } from "jose";
import Provider from "oidc-provider";
import { createServer } from "node:http";

const redirect = process.argv[2];
if (!redirect) throw new Error("usage: node identity-provider.mjs REDIRECT_URL");

const accounts = new Map(
  Object.entries({
    dana: { name: "Dana Reviewer", email: "dana@example.com", groups: ["countersign-reviewers"] },
    erin: { name: "Erin Officer", email: "erin@example.com", groups: ["countersign-reviewers", "security"] },
    nobody: { name: "No Role", email: "nobody@example.com", groups: ["marketing"] },
  }),
);
let tamper = null;
let refreshes = 0;

const { privateKey } = await generateKeyPair("RS256", { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: "test-key", alg: "RS256", use: "sig" };
const other = (await generateKeyPair("RS256")).privateKey;

const server = createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: "countersign",
      client_secret: "test-secret",
      redirect_uris: [redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    },
  ],
  jwks: { keys: [jwk] },
  cookies: { keys: ["test-cookie-key"] },
  features: { devInteractions: { enabled: true } },
  scopes: ["openid", "profile", "email", "groups", "offline_access"],
  claims: { openid: ["sub"], profile: ["name"], email: ["email"], groups: ["groups"] },
  // The groups in the ID token, as Keycloak and Entra put them there.
  conformIdTokenClaims: false,
  issueRefreshToken: async () => true,
  // Every request of a test is a new sign-in's: no lingering consent screens.
  loadExistingGrant: async (ctx) => {
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope("openid profile email groups offline_access");
    grant.addOIDCClaims(["name", "email", "groups"]);
    await grant.save();
    return grant;
  },
  findAccount: async (_ctx, id) => {
    const account = accounts.get(id);
    if (!account || account.disabled) return undefined;
    return {
      accountId: id,
      claims: async () => ({ sub: id, name: account.name, email: account.email, groups: account.groups }),
    };
  },
});
provider.proxy = false;

// The faults a test asks for, applied to the token endpoint's answer.
provider.use(async (ctx, next) => {
  await next();
  if (ctx.path === "/token" && ctx.oidc?.params?.grant_type === "refresh_token") refreshes += 1;
  const location = ctx.response.get("location");
  if (tamper === "iss-parameter" && location?.startsWith(redirect)) {
    const answer = new URL(location);
    answer.searchParams.set("iss", "http://127.0.0.1:1/not-the-issuer");
    ctx.redirect(answer.toString());
    return;
  }
  if (ctx.path !== "/token" || !tamper || !ctx.body?.id_token) return;
  const token = ctx.body.id_token;
  if (tamper === "signature") {
    ctx.body.id_token = await new SignJWT(decodeJwt(token)).setProtectedHeader(decodeProtectedHeader(token)).sign(other);
    return;
  }
  const claims = decodeJwt(token);
  if (tamper === "iss") claims.iss = "http://127.0.0.1:1/not-the-issuer";
  if (tamper === "aud") claims.aud = "another-client";
  if (tamper === "exp") Object.assign(claims, { iat: claims.iat - 7200, exp: claims.iat - 3600 });
  ctx.body.id_token = await new SignJWT(claims).setProtectedHeader(decodeProtectedHeader(token)).sign(privateKey);
});

const handle = provider.callback();
server.on("request", async (req, res) => {
  if (req.method === "GET" && req.url === "/test/refreshes") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ refreshes }));
    return;
  }
  if (req.method === "POST" && req.url.startsWith("/test/")) {
    let body = "";
    for await (const chunk of req) body += chunk;
    const change = JSON.parse(body || "{}");
    if (req.url === "/test/tamper") tamper = change.mode ?? null;
    const id = req.url.match(/^\/test\/accounts\/(\w+)$/)?.[1];
    if (id) accounts.set(id, { ...accounts.get(id), ...change });
    res.writeHead(204).end();
    return;
  }
  handle(req, res);
});

console.log(`issuer: ${issuer}`);
