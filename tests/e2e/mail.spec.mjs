// Telling reviewers by e-mail (serve --smtp-url). Countersign's mail goes
// to a real SMTP server (aiosmtpd, tests/mail/smtp.py). A link in it decides
// nothing, whoever opens it: a "scanner" browser that opens every link of
// many e-mails, runs their scripts, clicks every button and submits every
// form decides nothing; the person the e-mail was sent to decides in the
// desk, signed in through a real provider (oidc-provider), and the decision
// is recorded as made by e-mail. The link works once, for that person only.
import { expect, test } from "@playwright/test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, freePort, newPlanReview, shoot, wcagViolations } from "./support.mjs";
import { fromDesk, signIn, startDesk, startProvider, startSmtp } from "./sign-in-support.mjs";

// How many e-mails the scanner opens every link of (the test command: 200;
// COUNTERSIGN_SCANNED_MAILS=1000 for the figure in docs/security.md).
const SCANNED = Number(process.env.COUNTERSIGN_SCANNED_MAILS ?? 200);

let dir, provider, desk, smtp;

test.beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "countersign-mail-"));
  const port = await freePort();
  provider = await startProvider("oidc-provider", `http://127.0.0.1:${port}/auth/callback`);
  smtp = await startSmtp();
  const policy = join(dir, "policy.toml");
  writeFileSync(policy, '[[rule]]\nname = "deploys"\ntool = "deploy_*"\nemail = ["erin@example.com"]\n');
  desk = await startDesk(dir, port, provider, { extra: [
    "--smtp-url", `smtp://127.0.0.1:${smtp.port}`, "--mail-from", "Countersign <countersign@example.com>",
    "--mail-to", "dana@example.com", "--policy", policy, "--agent-rate", "none", "--reviewer-rate", "none",
  ] });
});

test.afterEach(async () => {
  await desk?.stop();
  desk = undefined;
  provider.stop();
  smtp.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The e-mail about review `id`, once it came, with its link. */
async function mailAbout(id) {
  await expect.poll(() => smtp.mails.some((m) => m.body.includes(id)), { timeout: 20_000 }).toBe(true);
  const mail = smtp.mails.find((m) => m.body.includes(id));
  const link = new RegExp(`${desk.url}/reviews/${id}\\?mail=(mlk_\\w+)`).exec(mail.body);
  expect(link, mail.body).not.toBeNull();
  return { ...mail, link: link[0], token: link[1] };
}

async function ask(n) {
  const created = await api(desk, desk.agent, "POST", "/reviews", newPlanReview(n));
  expect(created.status).toBe(201);
  return created.body.review.confirm.confirm_id;
}

const approve = (extra = {}) => ({ status: "approved", decided_by_role: "reviewer", ...extra });

test("the person an e-mail was sent to decides from its link, signed in, and the decision says by e-mail", async ({ page }) => {
  const id = await ask(1);
  const mail = await mailAbout(id);
  expect(mail.to).toEqual(["dana@example.com"]);
  expect(mail.subject).toBe("Approval needed: Delete stale preview environments 1");
  expect(mail.body).toContain("Opening the link decides nothing");

  // Opened signed out: signing in from there comes back to it.
  await signIn(page, desk, "dana", { from: mail.link.slice(desk.url.length) });
  await expect(page).toHaveURL(mail.link);
  await expect(page.getByRole("note")).toHaveText(/You opened this from an e-mail\. Opening its link decided nothing/);
  expect(await wcagViolations(page)).toEqual([]);
  await shoot(page, "from-mail");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("status").filter({ hasText: "approved by reviewer" })).toBeVisible();
  await expect(page.getByRole("list", { name: "Decision history" })).toContainText("approved by reviewer (Dana Reviewer) by e-mail");
  const stored = (await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body;
  expect(stored.outcome.receipt.body.decisions[0]).toMatchObject({ channel: "email", decided_by_person: { email: "dana@example.com" } });

  // A decision sent again under its Idempotency-Key (the desk retrying after
  // a timeout) gets the first answer, though the link is spent now.
  const other = await mailAbout(await ask(2));
  const first = await fromDesk(page, "POST", `/reviews/${other.link.split("/reviews/")[1].split("?")[0]}/decisions`, approve({ mail_link: other.token }), { key: "from-mail" });
  expect(first.status).toBe(200);
  const retried = await fromDesk(page, "POST", `/reviews/${first.body.review.confirm.confirm_id}/decisions`, approve({ mail_link: other.token }), { key: "from-mail" });
  expect(retried.status).toBe(200);
  expect(retried.body.review.confirm.decisions).toEqual(first.body.review.confirm.decisions);
  expect(retried.body.outcome.receipt.body.decisions[0].channel).toBe("email");

  // Spent: it comes with no other decision.
  const again = await fromDesk(page, "POST", `/reviews/${id}/decisions`, approve({ mail_link: mail.token }));
  expect(again.status).toBe(403);
  expect(again.body.error).toMatchObject({ code: "mail_link_refused", message: expect.stringContaining("was used for a decision already") });
});

test("a link decides only for the person it was sent to, and never with a reviewer key", async ({ page }) => {
  const asked = await api(desk, desk.agent, "POST", "/tool-calls", {
    requestedByRole: "ci-agent", sessionId: "s1", runId: "r1",
    toolCall: { name: "deploy_service", args: { service: "billing" } }, humanSummary: "deploy_service billing", riskTier: "R2",
  });
  const id = asked.body.outcome.confirm_id;
  const mail = await mailAbout(id);
  expect(mail.to).toEqual(["erin@example.com"]);
  expect(mail.body).toContain("risk R2");

  await signIn(page, desk, "dana");
  const dana = await fromDesk(page, "POST", `/reviews/${id}/decisions`, approve({ mail_link: mail.token }));
  expect(dana.status).toBe(403);
  expect(dana.body.error.message).toContain("was sent to erin@example.com, and you are signed in as Dana Reviewer");
  const key = await api(desk, desk.reviewer, "POST", `/reviews/${id}/decisions`, approve({ mail_link: mail.token }), { "Idempotency-Key": "k1" });
  expect(key.status).toBe(403);
  expect(key.body.error.code).toBe("mail_link_refused");
  expect((await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body.review.confirm.status).toBe("pending");
});

test(`a mail scanner that opens every link of ${SCANNED} e-mails, runs their scripts, clicks every button and submits every form decides nothing`, async ({ browser }) => {
  test.setTimeout(600_000);
  const ids = [];
  const call = async (n) => {
    const asked = await api(desk, desk.agent, "POST", "/tool-calls", {
      requestedByRole: "ops-agent", sessionId: `s${n}`, runId: `r${n}`,
      toolCall: { name: "restart_service", args: { service: `svc-${n}` } }, humanSummary: `restart svc-${n}`, riskTier: "R2",
      // Waiting longer than the scan takes.
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(asked.status).toBe(201);
    return asked.body.outcome.confirm_id;
  };
  for (let n = 0; n < SCANNED; n += 50) {
    ids.push(...(await Promise.all(Array.from({ length: Math.min(50, SCANNED - n) }, (_, i) => call(n + i)))));
  }
  await expect.poll(() => smtp.mails.length, { timeout: 120_000 }).toBe(SCANNED);
  const links = smtp.mails.map((m) => /http:\/\/\S+\?mail=mlk_\w+/.exec(m.body)[0]);
  expect(new Set(links).size).toBe(SCANNED);

  // Four scanners at once, each a browser with no session, as a mail
  // gateway's sandbox is.
  const queue = [...links];
  const scanned = { pages: 0, clicks: 0, forms: 0 };
  await Promise.all(Array.from({ length: 4 }, async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    for (let link = queue.shift(); link; link = queue.shift()) {
      await page.goto(link);
      await page.locator("main").waitFor();
      // As a sandbox's script does: every button clicked, every form
      // submitted, then a moment for what they send to leave.
      const [clicks, forms] = await page.evaluate(() => {
        const buttons = [...document.querySelectorAll("button, input[type=submit]")];
        for (const button of buttons) button.click();
        const forms = [...document.forms];
        for (const form of forms) form.isConnected && form.requestSubmit();
        return [buttons.length, forms.length];
      });
      await page.waitForTimeout(100);
      scanned.clicks += clicks;
      scanned.forms += forms;
      scanned.pages += 1;
    }
    await context.close();
  }));
  console.log(`scanner: ${scanned.pages} pages, ${scanned.clicks} buttons clicked, ${scanned.forms} forms submitted`);
  expect(scanned.pages).toBe(SCANNED);
  expect(scanned.clicks).toBeGreaterThan(0);

  const decided = [];
  for (const id of ids) {
    const review = (await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body.review;
    if (review.confirm.status !== "pending" || (review.confirm.decisions ?? []).length > 0 || (review.deciders ?? []).length > 0) decided.push(id);
  }
  expect(decided, "decisions made by the scanner").toEqual([]);
});
