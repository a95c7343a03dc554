// Countersign as an operator deploys it (docs/operating.md): behind Debian's
// real nginx with the documented configuration (deploy/nginx/countersign.conf),
// TLS ending at nginx with a certificate this test makes. The first visit
// asks for the key, live events arrive through the proxy, the server's
// printed links use --public-url, and request ids pass through.
import { expect, test } from "@playwright/test";
import { api, freePort, newPlanReview, shoot, startServer } from "./support.mjs";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";

test.use({ ignoreHTTPSErrors: true });

/** GET through nginx, taking the test's own certificate: the status and headers. */
const get = (url) => new Promise((resolve) => {
  request(url, { rejectUnauthorized: false }, (response) => {
    response.resume();
    resolve({ status: response.statusCode, headers: response.headers });
  }).on("error", () => resolve({ status: 0, headers: {} })).end();
});

/** A certificate for `localhost`, self-signed, in `dir`. */
function certificate(dir) {
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
    "-keyout", join(dir, "privkey.pem"), "-out", join(dir, "fullchain.pem")], { stdio: "ignore" });
}

/** nginx with the documented server block, its port, name, certificate and upstream put in. */
async function startNginx(dir, port, upstream) {
  const documented = readFileSync("deploy/nginx/countersign.conf", "utf8");
  const block = documented
    .replace("listen 443 ssl http2;", `listen 127.0.0.1:${port} ssl http2;`)
    .replace("server_name desk.example.com;", "server_name localhost;")
    .replaceAll("/etc/ssl/countersign/", `${dir}/`)
    .replaceAll("/var/log/nginx/", `${dir}/`)
    .replaceAll("http://127.0.0.1:8080", upstream);
  const directives = block.split("\n").filter((line) => !line.trim().startsWith("#")).join("\n");
  expect(directives, "every placeholder was found").not.toMatch(/listen 443|desk\.example\.com|\/etc\/ssl|\/var\/log|127\.0\.0\.1:8080/);
  writeFileSync(join(dir, "nginx.conf"), `daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events {}
http {
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${block}
}
`);
  execFileSync("nginx", ["-t", "-q", "-c", join(dir, "nginx.conf")], { stdio: "inherit" });
  const child = spawn("nginx", ["-c", join(dir, "nginx.conf")], { stdio: "inherit" });
  const url = `https://localhost:${port}`;
  for (let i = 0; i < 100 && (await get(`${url}/api/v1/health`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  return { url, stop: () => child.kill("SIGQUIT") };
}

let dir;
let server;
let nginx;
test.beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "countersign-proxy-"));
  certificate(dir);
  const port = await freePort();
  server = await startServer(join(dir, "data"), "127.0.0.1:0", { extra: ["--public-url", `https://localhost:${port}`, "--metrics"] });
  nginx = await startNginx(dir, port, server.url);
  expect(nginx.url).toBe(`https://localhost:${port}`);
});
test.afterEach(async () => {
  nginx?.stop();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("behind nginx with TLS: the first visit connects, live events arrive, links and request ids are right", async ({ page }) => {
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  expect(server.printed).toContain(`Open ${nginx.url}/ to review.`);

  await page.goto(`${nginx.url}/`);
  await expect(page).toHaveURL(`${nginx.url}/settings`);
  await expect(page.getByRole("form", { name: "Connect to this desk's server" })).toContainText(nginx.url);
  await page.getByLabel("Reviewer key").fill(server.reviewer);
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  await page.goto(`${nginx.url}/`);
  const rows = page.locator("body:not(.painting)").getByRole("list", { name: "Reviews" }).getByRole("listitem");
  await expect(rows).toHaveCount(7);

  // An agent asks (straight to the server): the row arrives through nginx's event stream.
  const created = await api(server, server.agent, "POST", "/reviews", newPlanReview(7));
  expect(created.status).toBe(201);
  await expect(rows).toHaveCount(8, { timeout: 5000 });
  await shoot(page, "proxy-inbox");

  // nginx's request id is the one the server logs and answers with.
  const id = (await get(`${nginx.url}/api/v1/health`)).headers["x-request-id"];
  expect(id).toMatch(/^[0-9a-f]{32}$/);
  // nginx writes the line once the answer is sent: it may land a moment after the client has it.
  await expect.poll(() => readFileSync(join(dir, "countersign.access.log"), "utf8")).toMatch(new RegExp(`"GET /api/v1/health HTTP/[0-9.]+" 200 .* id=${id}`));
  // The server answers its metrics on its own address; nginx never passes them on.
  expect((await fetch(`${server.url}/metrics`)).status).toBe(200);
  expect((await get(`${nginx.url}/metrics`)).status).toBe(404);
  expect(errors).toEqual([]);
});
