// Reviewers sign in with OpenID Connect against a real provider
// (oidc-provider from npm, run by tests/node22/identity-provider.mjs) in
// headless Chromium: the session, roles from groups, sign-out, the checks
// that refuse a forged or replayed answer and a cross-site request, groups
// asked for again while signed in, and sessions shared by two instances.
// The core of it again against a second, different provider
// (django-oidc-provider from PyPI, tests/django-oidc/provider.py).
import { expect, test as base } from "@playwright/test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, binary, chooseRole, freePort, newPlanReview, shoot, startServer, wcagViolations } from "./support.mjs";
import { NODE22, fromDesk, signIn, startDesk, startProvider, startReceiver } from "./sign-in-support.mjs";

/** Which provider a test signs in with: `test.use({ idp })` in a describe block. */
const test = base.extend({ idp: ["oidc-provider", { option: true }] });

const approve = (role = "reviewer") => ({ status: "approved", decided_by_role: role, reason: "Looks right" });

let dir, port, provider, desk;

test.beforeEach(async ({ idp }) => {
  dir = mkdtempSync(join(tmpdir(), "countersign-sign-in-"));
  port = await freePort();
  provider = await startProvider(idp, `http://127.0.0.1:${port}/auth/callback`);
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

const MIGRATION = "550e8400-e29b-41d4-a716-446655440520";

/** The desk's own script errors and failed requests (the provider's pages are not the desk's). */
function watchDesk(page) {
  const [errors, base] = [[], desk.url];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && m.location().url.startsWith(base) && errors.push(`${m.text()} ${m.location().url}`));
  return errors;
}

test.describe("through the desk", () => {

  test("a reviewer signs in from the desk, decides, sees their sessions and signs out", async ({ page }) => {
    desk = await startDesk(dir, port, provider);
    const errors = watchDesk(page);
    await page.goto(`${desk.url}/`);
    // A first visit to the server's desk: sign-in comes first, beside the key form.
    const button = page.getByRole("link", { name: "Sign in with Test SSO" });
    await expect(button).toBeVisible();
    expect(await wcagViolations(page)).toEqual([]);
    await shoot(page, "sign-in");
    await button.click();
    await page.locator('input[name="login"]').fill("erin");
    await page.locator('input[name="password"]').fill("any");
    await page.locator('button[type="submit"]').click();
    await expect(page).toHaveURL(`${desk.url}/`);
    await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
    await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(7);
    expect(await page.evaluate(() => Object.values({ ...localStorage, ...sessionStorage }).join(" ")), "no secret in the page's storage")
      .not.toMatch(/cs_session_|cs_reviewer_/);

    // The decision is the person's: the role is one their groups give.
    await page.goto(`${desk.url}/reviews/${MIGRATION}`);
    await expect(page.locator("select#decided-by-role option")).toHaveText(["reviewer", "security_officer"]);
    await chooseRole(page, "security_officer");
    await page.getByLabel(/^Reason/).fill("Backups verified.");
    await page.getByRole("button", { name: "Approve" }).click();
    await expect(page.getByRole("status").filter({ hasText: "approved by security_officer" })).toBeVisible();
    await expect(page.getByRole("list", { name: "Decision history" })).toContainText("approved by security_officer (Erin Officer)");
    const stored = await api(desk, desk.reviewer, "GET", `/reviews/${MIGRATION}`);
    expect(stored.body.review.deciders.at(-1).person).toMatchObject({ subject: "erin", name: "Erin Officer" });
    expect(stored.body.outcome.receipt.body.decisions.at(-1).decided_by_person.email).toBe("erin@example.com");

    // Settings: who is signed in, and their sessions (a second browser's too).
    const other = await page.context().browser().newContext();
    const elsewhere = await other.newPage();
    await signIn(elsewhere, desk, "erin");
    await page.goto(`${desk.url}/settings`);
    await expect(page.getByText("You are signed in as Erin Officer (erin@example.com).")).toBeVisible();
    const sessions = page.getByRole("region", { name: "Your sessions" }).getByRole("listitem");
    await expect(sessions).toHaveCount(2);
    await expect(sessions.first()).toContainText("HeadlessChrome");
    await expect(page.getByText("This browser", { exact: true })).toBeVisible();
    await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
    // Pairing a device is for keys: a signed-in person signs in on the other device.
    await expect(page.getByRole("button", { name: "Add a device" })).toHaveCount(0);
    expect(await wcagViolations(page)).toEqual([]);
    await shoot(page, "sessions");
    // Ending the other browser's session ends it there.
    await page.getByRole("button", { name: "End this session" }).click();
    await expect(page.getByText("Session ended.")).toBeVisible();
    await expect(sessions.filter({ hasText: "revoked by its person" })).toHaveCount(1);
    expect((await fromDesk(elsewhere, "GET", "/reviews")).status).toBe(401);
    await other.close();

    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page.getByRole("link", { name: "Sign in with Test SSO" })).toBeVisible();
    expect((await page.context().cookies()).map((c) => c.name)).not.toContain("__Host-countersign_session");
    expect(errors).toEqual([]);
  });

  test("a link to a request opened before signing in leads back to it once signed in", async ({ page }) => {
    desk = await startDesk(dir, port, provider);
    await signIn(page, desk, "dana", { from: `/reviews/${MIGRATION}` });
    await expect(page).toHaveURL(`${desk.url}/reviews/${MIGRATION}`);
    await expect(page.getByRole("button", { name: "Approve" })).toBeVisible();
    // Only this desk's pages: an address elsewhere leads to the inbox.
    await page.context().clearCookies();
    await page.goto(`${desk.url}/auth/login?return_to=${encodeURIComponent("//evil.example/")}`);
    await page.locator(desk.provider.form.account).fill("dana");
    await page.locator(desk.provider.form.password).fill("any");
    await page.locator(desk.provider.form.submit).click();
    await expect(page).toHaveURL(`${desk.url}/`);
  });

  test("a signed-in person whose groups give no role sees why, never the inbox", async ({ page }) => {
    desk = await startDesk(dir, port, provider);
    const errors = watchDesk(page);
    await page.goto(`${desk.url}/`);
    await page.getByRole("link", { name: "Sign in with Test SSO" }).click();
    await page.locator('input[name="login"]').fill("nobody");
    await page.locator('input[name="password"]').fill("any");
    await page.locator('button[type="submit"]').click();
    await expect(page.getByRole("heading", { name: "You are signed in, but may not review here" })).toBeVisible();
    await expect(page.getByText("You are signed in as No Role")).toBeVisible();
    await expect(page.getByRole("list", { name: "Reviews" })).toHaveCount(0);
    // No link state that never connects, and no screens to open.
    await expect(page.getByRole("banner").getByRole("status")).toHaveCount(0);
    await expect(page.getByRole("navigation", { name: "Main" })).toHaveCount(0);
    expect(await wcagViolations(page)).toEqual([]);
    await shoot(page, "no-role");
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page.getByRole("link", { name: "Sign in with Test SSO" })).toBeVisible();
    // Only the desk's first requests, refused before it knew: nothing failed otherwise.
    expect(errors.filter((e) => !e.includes("status of 403"))).toEqual([]);
  });

  test("where reviewer keys are turned off, a key is refused and the desk offers sign-in only", async ({ page }) => {
    desk = await startDesk(dir, port, provider, { settings: "reviewer_keys = false" });
    const refused = await api(desk, desk.reviewer, "GET", "/reviews");
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("reviewer_keys_off");
    expect((await api(desk, desk.agent, "POST", "/reviews", newPlanReview(3))).status).toBe(201);
    await page.goto(`${desk.url}/settings`);
    await expect(page.getByText("Reviewer keys are turned off on this server: reviewers sign in.")).toBeVisible();
    await expect(page.getByLabel("Reviewer key")).toHaveCount(0);
  });
});

test("a reviewer signs in with the provider's form, and their decision names them", async ({ page }) => {
  const receiver = await startReceiver();
  desk = await startDesk(dir, port, provider, { extra: ["--webhook", receiver.url] });
  await signIn(page, desk, "dana");
  const session = await fromDesk(page, "GET", "/session");
  expect(session.body.signed_in).toBe(true);
  expect(session.body.session.person).toEqual({ issuer: provider.issuer, subject: "dana", name: "Dana Reviewer", email: "dana@example.com" });
  expect(session.body.session.roles).toEqual(["reviewer"]);
  const cookies = await page.context().cookies();
  const cookie = cookies.find((c) => c.name === "__Host-countersign_session");
  expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict", path: "/" });
  // The page reads only the hint that a session exists, never its secret.
  expect(await page.evaluate(() => document.cookie)).toBe("countersign_signed_in=1");
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
  expect(String(verified.stdout)).toContain(`approved as reviewer by Dana Reviewer <dana@example.com> (dana at ${provider.issuer}, ${session.body.session.id}) in the desk at `);
  // So does the webhook that tells of the decision.
  await expect.poll(() => receiver.bodies.find((b) => b.type === "review.decided")?.decision, { timeout: 15_000 })
    .toMatchObject({ status: "approved", decided_by_role: "reviewer", decided_by_key: session.body.session.id, decided_by_person: session.body.session.person });
  receiver.stop();
});

test("a signed-in reviewer's page holds the inbox's first rows, drawn without any script, then the app's", async ({ page, browser }) => {
  desk = await startDesk(dir, port, provider);
  const id = await ask();
  await signIn(page, desk, "dana");
  // The page itself holds the first rows and its stylesheet: one round trip draws them on a slow link.
  const served = await page.request.get(`${desk.url}/`);
  expect(served.headers()["cache-control"]).toBe("private, no-store");
  expect(served.headers()["vary"]).toContain("cookie");
  const html = await served.text();
  expect(html).toContain('<body class="painting"><div class="first-paint">');
  expect(html).toContain(`href="/reviews/${id}"`);
  expect(html).toContain("<style>");
  expect(html).not.toContain('rel="stylesheet"');
  // Anyone else gets the page as built; so does a path that is not the inbox.
  for (const plain of [await (await fetch(`${desk.url}/`)).text(), await (await page.request.get(`${desk.url}/index.html`)).text()]) {
    expect(plain).not.toContain(`<div class="first-paint">`);
    expect(plain).toContain('rel="stylesheet"');
  }
  // With scripts off, the rows stand styled (the policy allows the stylesheet by its hash) and are links.
  const still = await browser.newContext({ javaScriptEnabled: false, storageState: await page.context().storageState() });
  const bare = await still.newPage();
  const refused = [];
  bare.on("console", (m) => m.type() === "error" && refused.push(m.text()));
  await bare.goto(`${desk.url}/`);
  const row = bare.locator(`.first-paint a[href="/reviews/${id}"]`);
  await expect(row).toBeVisible();
  await expect(bare.locator(".first-paint .topbar")).toHaveCSS("display", "flex");
  expect(refused).toEqual([]);
  await shoot(bare, "signed-in-first-paint", { drawing: true });
  await still.close();
  // Before the app's code arrives, the drawing's controls are inert and a tapped row opens once the app starts.
  const errors = watchDesk(page);
  let releaseApp;
  const held = new Promise((resolve) => (releaseApp = resolve));
  await page.route(/\/countersign-app-[0-9a-f]+_bg\.wasm$/, async (route) => (await held, route.continue()));
  await page.goto(`${desk.url}/`);
  const drawn = page.locator(`.first-paint a[href="/reviews/${id}"]`);
  await expect(page.locator(".first-paint .tabs")).toHaveJSProperty("inert", true);
  await drawn.click();
  await expect(page).toHaveURL(`${desk.url}/reviews/${id}`);
  await expect(drawn).toHaveAttribute("aria-busy", "true");
  releaseApp();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Delete stale preview environments 1");
  await expect(page.locator(".first-paint")).toHaveCount(0);
  // Back in the inbox, the app's own rows stand where the drawing stood.
  await page.goBack();
  await expect(page.getByRole("list", { name: "Reviews" }).locator(`a[href="/reviews/${id}"]`)).toBeVisible();
  expect(errors).toEqual([]);
});

test("a person whose groups give no role is signed in but may not review", async ({ page }) => {
  desk = await startDesk(dir, port, provider);
  await signIn(page, desk, "nobody");
  const session = await fromDesk(page, "GET", "/session");
  expect(session.body.session.roles).toEqual([]);
  const listed = await fromDesk(page, "GET", "/reviews");
  expect(listed.status).toBe(403);
  expect(listed.body.error.code).toBe("no_role");
  expect(listed.body.error.message).toContain("you are signed in as No Role, but none of your groups gives a role");
  // Nor does the desk's page draw the inbox for them.
  expect(await (await page.request.get(`${desk.url}/`)).text()).not.toContain(`<div class="first-paint">`);
});

test("signing out ends the session on the server, not only in the browser", async ({ page }) => {
  desk = await startDesk(dir, port, provider);
  await signIn(page, desk, "dana");
  const cookie = (await page.context().cookies()).find((c) => c.name === "__Host-countersign_session");
  const out = await page.evaluate(async (csrf) => (await fetch("/auth/logout", { method: "POST", headers: { "X-Countersign-CSRF": csrf } })).status, page.csrf);
  expect(out).toBe(204);
  const replayed = await fetch(`${desk.url}/api/v1/reviews`, { headers: { Cookie: `${cookie.name}=${cookie.value}` } });
  expect(replayed.status).toBe(401);
  expect((await replayed.json()).error.message).toContain("your session has ended");
  // The desk's page no longer draws the inbox with that cookie: it is the page as built.
  const served = await (await fetch(`${desk.url}/`, { headers: { Cookie: `${cookie.name}=${cookie.value}` } })).text();
  expect(served).not.toContain(`<div class="first-paint">`);
  expect(served).toContain('rel="stylesheet"');
  // Its start and end are in the audit chain, which holds.
  const verified = spawnSync(binary, ["audit", "--data", dir, "verify"]);
  expect(verified.status, String(verified.stdout) + String(verified.stderr)).toBe(0);
  // An operator sees it, ended, and can end a live one.
  // (The provider remembers her: a fresh browser shows its form again.)
  await page.goto("about:blank");
  await page.context().clearCookies();
  await signIn(page, desk, "dana");
  const listed = String(spawnSync(binary, ["sessions", "--data", dir, "list"]).stdout).trim().split("\n");
  expect(listed).toHaveLength(2);
  expect(listed[1]).toMatch(/^ses_\w+\tDana Reviewer <dana@example.com>\tdana at http:\/\/127\.0\.0\.1:\d+\troles reviewer\tsince \S+\tended \S+ \(signed out\)$/);
  const live = listed[0].split("\t")[0];
  expect(String(spawnSync(binary, ["sessions", "--data", dir, "revoke", live]).stdout)).toBe(`ended ${live}\n`);
  expect((await fromDesk(page, "GET", "/reviews")).status).toBe(401);
  const again = spawnSync(binary, ["sessions", "--data", dir, "revoke", live]);
  expect(again.status).toBe(2);
  expect(String(again.stderr)).toContain(`no live session ${live}`);
});

test("the sign-in asks with PKCE (S256), a state and a nonce, each new every time", async ({ page }) => {
  desk = await startDesk(dir, port, provider);
  const asked = [];
  const authorize = `${provider.issuer}/auth?`;
  page.on("request", (r) => r.url().startsWith(authorize) && asked.push(new URL(r.url()).searchParams));
  for (let i = 0; i < 2; i += 1) await page.goto(`${desk.url}/auth/login`);
  expect(asked).toHaveLength(2);
  for (const params of asked) {
    expect(params.get("response_type")).toBe("code");
    expect(params.get("code_challenge_method")).toBe("S256");
    expect(params.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    expect(params.get("state")).toMatch(/^[\w-]{16,}$/);
    expect(params.get("nonce")).toMatch(/^[\w-]{16,}$/);
  }
  for (const name of ["code_challenge", "state", "nonce"]) expect(asked[0].get(name)).not.toBe(asked[1].get(name));
});

test("a replayed callback, with its state and code, signs nobody in", async ({ page, browser }) => {
  desk = await startDesk(dir, port, provider);
  const callback = await signIn(page, desk, "dana");
  const again = await page.goto(callback);
  expect(again.status()).toBe(403);
  await expect(page.getByRole("alert")).toContainText("this sign-in is unknown or was used already");
  const other = await browser.newPage();
  const elsewhere = await other.goto(callback);
  expect(elsewhere.status()).toBe(403);
  await other.close();
});

test("a code taken from another browser's sign-in signs nobody in: PKCE's verifier is not that browser's", async ({ page, browser }) => {
  desk = await startDesk(dir, port, provider);
  // The attacker starts a sign-in of their own: their state, their browser binding.
  const attacker = await browser.newPage();
  // (The listeners read constants: they may still fire as the test ends.)
  const { issuer } = provider;
  const callback = `${desk.url}/auth/callback?`;
  let state;
  attacker.on("request", (r) => r.url().startsWith(issuer) && (state ??= new URL(r.url()).searchParams.get("state")));
  await attacker.goto(`${desk.url}/auth/login`);
  expect(state).toBeTruthy();
  // The victim signs in; their answer, with its code, never reaches the desk
  // (stopped meanwhile: a browser cannot hold back a redirect) but is seen.
  let stolen;
  page.on("request", (r) => r.url().startsWith(callback) && (stolen ??= new URL(r.url())));
  await page.goto(`${desk.url}/auth/login`);
  await page.locator(provider.form.account).fill("dana");
  await page.locator(provider.form.password).fill("any");
  await desk.stop();
  await page.locator(provider.form.submit).click();
  await expect.poll(() => stolen?.searchParams.get("code")).toBeTruthy();
  // The desk again (same database); the attacker brings the victim's code to their own sign-in.
  desk = await startDesk(dir, port, provider);
  const injected = new URL(stolen);
  injected.searchParams.set("state", state);
  const answer = await attacker.goto(injected.href);
  expect(answer.status()).toBe(403);
  // The provider refused the code: the verifier sent was the attacker's attempt's.
  await expect(attacker.getByRole("alert")).toContainText("Test SSO ended this sign-in: invalid_grant");
  expect((await attacker.context().cookies()).map((c) => c.name)).not.toContain("__Host-countersign_session");
  await attacker.close();
  // The same code with the victim's own state (and so verifier) was good.
  await page.goto(stolen.href);
  expect((await (await page.request.get(`${desk.url}/api/v1/session`)).json()).session?.person.subject).toBe("dana");
});

test("a session past its end is refused, and the desk asks to sign in again", async ({ page }) => {
  desk = await startDesk(dir, port, provider);
  await signIn(page, desk, "dana");
  expect((await fromDesk(page, "GET", "/reviews")).status).toBe(200);
  // Its `session_hours` pass: its end moved into the past in the database.
  const script = `const { DatabaseSync } = require("node:sqlite");
    const db = new DatabaseSync(process.argv[1]);
    db.exec("PRAGMA busy_timeout = 5000");
    db.prepare("UPDATE sessions SET expires_at = '2000-01-01T00:00:00.000000Z'").run();`;
  const moved = spawnSync(NODE22, ["-e", script, join(dir, "countersign.db")]);
  expect(moved.status, String(moved.stderr)).toBe(0);
  const refused = await fromDesk(page, "GET", "/reviews");
  expect(refused.status).toBe(401);
  expect(refused.body.error.message).toContain("your session has ended");
  await page.goto(`${desk.url}/`);
  await expect(page.getByRole("link", { name: "Sign in with Test SSO" })).toBeVisible();
});

test("an answer that names another issuer (RFC 9207's iss) is refused", async ({ page }) => {
  desk = await startDesk(dir, port, provider);
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
    desk = await startDesk(dir, port, provider);
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
  desk = await startDesk(dir, port, provider);
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

/**
 * Dana signs in to a desk that asks the provider again after 1 s; her
 * reviewers' group is taken away there, and her next decision is refused.
 */
async function groupRemovedWithinTheBound(page) {
  desk = await startDesk(dir, port, provider, { settings: "revalidate_after_seconds = 1" });
  await signIn(page, desk, "dana");
  expect((await fromDesk(page, "GET", "/reviews")).status).toBe(200);
  await provider.control("accounts/dana", { groups: ["marketing"] });
  await page.waitForTimeout(1100);
  const removed = await fromDesk(page, "POST", `/reviews/${await ask()}/decisions`, approve());
  expect(removed.status).toBe(403);
  expect(removed.body.error.code).toBe("no_role");
}

test("a group removed or an account disabled at the provider stops the session within the bound", async ({ page }) => {
  await groupRemovedWithinTheBound(page);
  await provider.control("accounts/dana", { disabled: true });
  await page.waitForTimeout(1100);
  const disabled = await fromDesk(page, "GET", "/reviews");
  expect(disabled.status).toBe(401);
  expect(disabled.body.error.message).toContain("Test SSO ended this sign-in");
});

test("requests that all find the provider's word too old ask it once, and all go ahead", async ({ page }) => {
  desk = await startDesk(dir, port, provider, { settings: "revalidate_after_seconds = 1" });
  await signIn(page, desk, "dana");
  const refreshes = async () => (await (await fetch(`${provider.issuer}/test/refreshes`)).json()).refreshes;
  // The desk's page is closed: only these requests, with its cookie, ask.
  const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
  await page.goto("about:blank");
  await page.waitForTimeout(1100);
  const before = await refreshes();
  const answers = await Promise.all(Array.from({ length: 8 }, () => fetch(`${desk.url}/api/v1/reviews`, { headers: { cookie } })));
  expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
  expect((await refreshes()) - before).toBe(1);
});

test("when the provider cannot be asked again, the session may not act", async ({ page }) => {
  desk = await startDesk(dir, port, provider, { settings: "revalidate_after_seconds = 1" });
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
  desk = await startDesk(dir, port, provider);
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
  desk = await startDesk(dir, port, provider, { extra: ["--policy", policy] });
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
  // A session mints no device key (it would outlive the checks of her groups).
  const pairing = await fromDesk(page, "POST", "/pairings", {});
  expect(pairing.status).toBe(403);
  expect(pairing.body.error.message).toContain("adds a device by signing in on it");
  const erin = await api(desk, desk.reviewer, "POST", `/reviews/${id}/decisions`, approve(), { "Idempotency-Key": "demo" });
  expect(erin.status).toBe(200);
  expect(erin.body.review.confirm.status).toBe("approved");
});

test.describe("with django-oidc-provider, a second provider", () => {
  test.use({ idp: "django-oidc-provider" });

  test("a reviewer signs in through its form, decides in the desk as their groups allow, and signs out", async ({ page }) => {
    desk = await startDesk(dir, port, provider);
    await page.goto(`${desk.url}/`);
    await page.getByRole("link", { name: "Sign in with Test SSO" }).click();
    await page.locator(provider.form.account).fill("erin");
    await page.locator(provider.form.password).fill("any");
    await page.locator(provider.form.submit).click();
    await expect(page).toHaveURL(`${desk.url}/`);
    await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
    await page.goto(`${desk.url}/reviews/${MIGRATION}`);
    await expect(page.locator("select#decided-by-role option")).toHaveText(["reviewer", "security_officer"]);
    await chooseRole(page, "security_officer");
    await page.getByLabel(/^Reason/).fill("Backups verified.");
    await page.getByRole("button", { name: "Approve" }).click();
    await expect(page.getByRole("status").filter({ hasText: "approved by security_officer" })).toBeVisible();
    await expect(page.getByRole("list", { name: "Decision history" })).toContainText("(Erin Officer)");
    const stored = await api(desk, desk.reviewer, "GET", `/reviews/${MIGRATION}`);
    // Its issuer has a path; its subjects are usernames.
    expect(provider.issuer).toMatch(/\/openid$/);
    expect(stored.body.review.deciders.at(-1).person).toEqual({ issuer: provider.issuer, subject: "erin", name: "Erin Officer", email: "erin@example.com" });
    await page.goto(`${desk.url}/settings`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page.getByRole("link", { name: "Sign in with Test SSO" })).toBeVisible();
    expect((await page.context().cookies()).map((c) => c.name)).not.toContain("__Host-countersign_session");
  });

  test("a person whose groups give no role may not review", async ({ page }) => {
    desk = await startDesk(dir, port, provider);
    await signIn(page, desk, "nobody");
    const listed = await fromDesk(page, "GET", "/reviews");
    expect(listed.status).toBe(403);
    expect(listed.body.error.code).toBe("no_role");
    expect(listed.body.error.message).toContain("you are signed in as No Role");
  });

  test("a group removed at the provider stops the session within the bound", async ({ page }) => {
    await groupRemovedWithinTheBound(page);
    // Put back, the next check gives the role again.
    await provider.control("accounts/dana", { groups: ["countersign-reviewers"] });
    await page.waitForTimeout(1100);
    expect((await fromDesk(page, "POST", `/reviews/${await ask(2)}/decisions`, approve())).status).toBe(200);
  });
});
