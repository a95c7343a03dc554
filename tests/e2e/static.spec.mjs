// The app on static hosts under a sub-path, as docs/operating.md tells an
// operator to serve it: the release build moved under /countersign/ by
// scripts/rebase-dist.mjs (what COUNTERSIGN_BASE=/countersign/ makes it do),
// served by Debian's real nginx and Caddy with the configurations in
// deploy/static/, by a host that answers files or 404.html only (as GitHub
// Pages does), and by Netlify's own redirects engine reading
// deploy/static/_redirects. On each: a reload on a screen's address and a
// review's link show that screen, links and the address bar stay under the
// sub-path, a decision is saved, and the Content-Security-Policy holds.
import { expect, test } from "@playwright/test";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, shoot } from "./support.mjs";

const BASE = "/countersign/";
const BILLING = "c0ffee00-0000-4000-8000-000000000003";
const MIGRATION = "550e8400-e29b-41d4-a716-446655440520";

async function until(url) {
  for (let i = 0; i < 200; i++) {
    if ((await fetch(url).catch(() => null))?.ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} never answered`);
}

/** The documented configuration with its placeholders put in; fails if one is not found. */
function documented(file, replacements) {
  let text = readFileSync(file, "utf8");
  for (const [from, to] of replacements) {
    expect(text, `${file} holds ${from}`).toContain(from);
    text = text.replaceAll(from, to);
  }
  return text;
}

const hosts = {
  async nginx(site, dir, port) {
    const block = documented("deploy/static/nginx.conf", [["root /var/www;", `root ${site};`]]);
    writeFileSync(join(dir, "nginx.conf"), `daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events {}
http {
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
${block}
  }
}
`);
    execFileSync("nginx", ["-t", "-q", "-c", join(dir, "nginx.conf")], { stdio: "inherit" });
    return spawn("nginx", ["-c", join(dir, "nginx.conf")], { stdio: "inherit" });
  },
  async caddy(site, dir, port) {
    const config = documented("deploy/static/Caddyfile", [
      ["example.com {", `{\n\tadmin off\n\tstorage file_system ${dir}/caddy\n}\nhttp://127.0.0.1:${port} {`],
      ["root * /var/www/countersign", `root * ${site}/countersign`],
    ]);
    writeFileSync(join(dir, "Caddyfile"), config);
    return spawn("caddy", ["run", "--adapter", "caddyfile", "--config", join(dir, "Caddyfile")],
      { stdio: "ignore", env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir } });
  },
  async pages(site, dir, port) {
    return spawn("node", ["scripts/serve-dist.mjs", site, String(port), "--like", "pages"], { stdio: "ignore" });
  },
  async netlify(site, dir, port) {
    copyFileSync("deploy/static/_redirects", join(site, "_redirects"));
    return spawn("node", ["scripts/serve-dist.mjs", site, String(port), "--like", "netlify"], { stdio: "ignore" });
  },
};

let site;
test.beforeAll(() => {
  site = mkdtempSync(join(tmpdir(), "countersign-site-"));
  // nginx's workers read it as another user.
  chmodSync(site, 0o755);
  execFileSync("node", ["scripts/rebase-dist.mjs", "dist", BASE, join(site, "countersign")], { stdio: "ignore" });
});
test.afterAll(() => rmSync(site, { recursive: true, force: true }));

for (const [name, start] of Object.entries(hosts)) {
  test(`served under ${BASE} by ${name}: reloads and links keep the sub-path, a decision is saved, the CSP holds`, async ({ page }) => {
    const dir = mkdtempSync(join(tmpdir(), `countersign-${name}-`));
    const port = await freePort();
    const host = await start(site, dir, port);
    try {
      const origin = `http://127.0.0.1:${port}`;
      await until(`${origin}${BASE}`);
      const problems = [];
      page.on("pageerror", (e) => problems.push(e.message));
      // A host answering 404.html says 404 for the page itself; nothing else may fail.
      page.on("console", (m) => m.type() === "error" && !(name === "pages" && /status of 404/.test(m.text())) && problems.push(m.text()));
      // A fetch cut short by leaving the page (ERR_ABORTED) is not a failure of the host.
      page.on("requestfailed", (r) => r.failure()?.errorText !== "net::ERR_ABORTED" && problems.push(`${r.url()}: ${r.failure()?.errorText}`));
      page.on("response", (r) => r.status() >= 400 && !(name === "pages" && r.request().isNavigationRequest()) && problems.push(`${r.url()}: ${r.status()}`));
      await page.addInitScript(() => {
        window.violations = [];
        document.addEventListener("securitypolicyviolation", (e) => window.violations.push(e.violatedDirective));
      });

      // A reload on a screen's address.
      await page.goto(`${origin}${BASE}settings`);
      await expect(page.getByRole("heading", { level: 1, name: "Settings" })).toBeVisible();
      // The first visit's demo, drawn under the sub-path; every link stays in it.
      await page.getByRole("link", { name: "Inbox" }).click();
      await expect(page).toHaveURL(`${origin}${BASE}`);
      const rows = page.locator("body:not(.painting)").getByRole("list", { name: "Reviews" }).getByRole("listitem");
      await expect(rows).toHaveCount(7);
      const links = await page.locator("a[href]").evaluateAll((all) => all.map((a) => a.getAttribute("href")));
      expect(links.filter((l) => !l.startsWith(BASE) && !l.startsWith("#"))).toEqual([]);
      await expect(rows.nth(5)).toContainText("1 problem");
      await page.getByRole("link", { name: /Ship billing v2/ }).click();
      await expect(page).toHaveURL(`${origin}${BASE}reviews/${BILLING}`);

      // A review's link opened afresh, then decided.
      await page.goto(`${origin}${BASE}reviews/${MIGRATION}`);
      await expect(page.locator(".dag g[role=button]")).toHaveCount(3);
      await page.getByLabel("Decide as role").fill("dba_reviewer");
      await page.getByLabel(/^Reason/).fill(`Fine on ${name}.`);
      await page.getByRole("button", { name: "Approve" }).click();
      await expect(page.getByRole("status").filter({ hasText: "Decided" })).toContainText("approved by dba_reviewer");
      await page.reload();
      await expect(page.getByRole("list", { name: "Decision history" })).toContainText(`Fine on ${name}.`);
      await page.getByRole("link", { name: "← Inbox" }).click();
      await expect(page).toHaveURL(`${origin}${BASE}`);
      await expect(rows).toHaveCount(6);
      await page.goBack();
      await expect(page).toHaveURL(`${origin}${BASE}reviews/${MIGRATION}`);

      // The app's files came from under the sub-path, under its policy.
      await expect(page.locator('meta[http-equiv="Content-Security-Policy"]')).toHaveCount(1);
      expect(await page.evaluate(() => window.violations)).toEqual([]);
      expect(problems).toEqual([]);
      if (name === "nginx" || name === "caddy") {
        // The configurations we ship: content-named files kept for a year, the page asked again.
        const named = readdirSync(join(site, "countersign")).find((f) => /-[0-9a-f]{16}\.js$/.test(f));
        expect((await fetch(`${origin}${BASE}${named}`)).headers.get("cache-control"), named).toContain("immutable");
        expect((await fetch(`${origin}${BASE}`)).headers.get("cache-control")).toBe("no-cache");
      }
      if (name === "nginx") await shoot(page, "static-host-review");
    } finally {
      host.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
