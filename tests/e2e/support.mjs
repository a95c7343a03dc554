// Helpers shared by the browser tests.
import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { createInterface } from "node:readline";

const shots = "tests/e2e/output/screenshots";

/** Fails each test of the file that logs a script error or a panic. */
export function failOnScriptErrors() {
  test.beforeEach(async ({ page }) => {
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    page.errors = errors;
  });
  test.afterEach(async ({ page }) => {
    expect(page.errors, "no script errors or panics").toEqual([]);
  });
}

/** Holds back the responses for URLs matching `pattern` by `ms`, as a slow network does. */
export async function arriveLate(page, pattern, ms) {
  await page.route(pattern, async (route) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    await route.continue();
  });
}

/** Has every inbox row in `page` drawn (`drawn`), or only those on screen, as the stylesheet says. */
const rowsDrawn = (page, drawn) => page.evaluate((drawn) => {
  // A sheet of its own beside the page's (the page's Content-Security-Policy refuses a <style> of the capture's
  // own), so rows the app draws anew before the capture are drawn too. Editing the page's own sheet instead left
  // Chromium answering its @media rules as they stood before a resize: a phone capture in the desktop's grid.
  window.captureSheet ??= new CSSStyleSheet();
  window.captureSheet.replaceSync(".review-row { content-visibility: visible !important; }");
  const others = document.adoptedStyleSheets.filter((sheet) => sheet !== window.captureSheet);
  document.adoptedStyleSheets = drawn ? [...others, window.captureSheet] : others;
}, drawn);

/**
 * Full-page screenshots at desktop and at phone width, into tests/e2e/output/:
 * of the app, once the first paint's drawing has given way to it, or (`drawing: true`) of the drawing itself.
 */
export async function shoot(page, name, { drawing = false } = {}) {
  // The drawing stands in for the app until the app's own rows come: a capture in between would show either.
  if (!drawing) await page.waitForFunction(() => !document.querySelector(".first-paint"));
  for (const [label, viewport] of [["desktop", { width: 1280, height: 900 }], ["phone", { width: 375, height: 800 }]]) {
    await page.setViewportSize(viewport);
    // The whole page as a person scrolling through it sees it: the inbox's rows below the screen are drawn once
    // scrolled to, not for a capture of the page at once, so they are drawn for it.
    await rowsDrawn(page, true);
    // From the top: a page captured whole while scrolled shows its sticky header in the middle.
    const scrolled = await page.evaluate(() => { const y = scrollY; scrollTo(0, 0); return y; });
    await page.screenshot({ path: `${shots}/${name}-${label}.png`, fullPage: true });
    await page.evaluate((y) => scrollTo(0, y), scrolled);
    await rowsDrawn(page, false);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** The `countersign` binary the browser tests drive (COUNTERSIGN_BIN overrides). */
export const binary = process.env.COUNTERSIGN_BIN ?? "target/debug/countersign";

/**
 * Starts `countersign serve` on `dataDir`, serving dist/: with the demo data
 * and its keys, or (`demo: false`) over what the folder's database holds;
 * `extra` arguments are passed on (`--policy FILE`).
 * Resolves with its URL, the demo keys, what it logged so far, and a stop function.
 */
export async function startServer(dataDir, listen = "127.0.0.1:0", { demo = true, extra = [] } = {}) {
  const args = ["serve", ...(demo ? ["--demo"] : []), "--listen", listen, "--app-dir", "dist", "--data", dataDir, ...extra];
  // Warnings and errors only: one log line per request would bury the tests' own output.
  const env = { ...process.env, RUST_LOG: process.env.RUST_LOG ?? "warn" };
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"], env });
  const lines = createInterface({ input: child.stdout });
  const server = { child, printed: "", logged: "", stop: () => new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : (child.once("exit", r), child.kill("SIGKILL")))) };
  // Its log still reaches the test's output, and the test can read it.
  child.stderr.on("data", (chunk) => (server.logged += chunk, process.stderr.write(chunk)));
  await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`countersign serve exited with ${code}`)));
    lines.on("line", (line) => {
      server.printed += `${line}\n`;
      if (line.startsWith("countersign: listening on ")) server.url = line.slice("countersign: listening on ".length);
      if (line.startsWith("Demo reviewer key")) server.reviewer = line.split(" ").pop();
      if (line.startsWith("Demo agent key")) server.agent = line.split(" ").pop();
      if (server.url && (!demo || (server.reviewer && server.agent))) resolve();
    });
  });
  return server;
}

/** One API call with a key; resolves with the status and the JSON body. */
export async function api(server, key, method, path, body, headers = {}) {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body ? { "Content-Type": "application/json" } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: await response.json() };
}

/**
 * Fills `dataDir`'s database with `count` numbered reviews (the server's
 * `seed` example: three in four pending, seven requesting agents) and returns
 * a reviewer key and an agent key for it.
 */
export function seedReviews(dataDir, count) {
  const seed = process.env.COUNTERSIGN_SEED_BIN ?? "target/debug/examples/seed";
  const run = spawnSync(seed, ["--database", `sqlite://${dataDir}/countersign.db`, "--count", String(count)]);
  expect(run.status, String(run.stderr)).toBe(0);
  const reviewer = String(run.stdout).match(/reviewer key: (\S+)/)[1];
  const minted = spawnSync(binary, ["keys", "--data", dataDir, "add", "--kind", "agent", "--label", "e2e"]);
  expect(minted.status, String(minted.stderr)).toBe(0);
  return { reviewer, agent: String(minted.stdout).split("\n")[0] };
}

/** A new pending plan review numbered `n` (1–9), asked now by `cleanup-agent`. */
export function newPlanReview(n) {
  const meta = { protocol_version: "1.0.0", schema_version: "1.0.0" };
  const plan = `${n}0000000-2222-4222-8222-222222222222`;
  return {
    confirm: {
      meta, confirm_id: `${n}0000000-1111-4111-8111-111111111111`, target_type: "plan", target_id: plan, status: "pending",
      requested_by_role: "cleanup-agent", requested_at: new Date().toISOString(), reason: "Nightly cleanup",
    },
    target: { plan: {
      meta, plan_id: plan, context_id: "33333333-3333-4333-8333-333333333333", title: `Delete stale preview environments ${n}`,
      objective: "Free the preview cluster", status: "proposed",
      steps: [{ step_id: `${n}0000000-5555-4555-8555-555555555555`, description: "Delete environments idle for 14 days", status: "pending", dependencies: [] }],
    } },
  };
}

/** The WCAG 2.0 and 2.1 level A and AA violations on the page as it is now. */
export async function wcagViolations(page) {
  const { violations } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).slice(0, 5).join(", ")}`);
}

const LANGGRAPH = process.env.LANGGRAPH_BIN ?? `${process.cwd()}/.venv-langgraph/bin/langgraph`;

/** A port of 127.0.0.1 free now. */
export function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Starts `langgraph dev` (from .venv-langgraph, or LANGGRAPH_BIN), serving tests/langgraph/, on 127.0.0.1 and waits until it answers (it prints
 * the address it took: another port when the one asked for is taken). */
export async function startLangGraph() {
  const port = String(await freePort());
  const child = spawn(LANGGRAPH, ["dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", port, "--config", "langgraph.json"], {
    cwd: "tests/langgraph",
    detached: true,
    env: { ...process.env, LANGGRAPH_CLI_NO_ANALYTICS: "1", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`langgraph dev did not start in 90 s:\n${log}`)), 90_000);
    const read = (chunk) => {
      log += chunk.toString();
      const found = log.replace(/\x1b\[[0-9;]*m/g, "").match(/API: (http:\/\/127\.0\.0\.1:\d+)/);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => reject(new Error(`langgraph dev exited (${code}):\n${log}`)));
  });
  for (let i = 0; i < 120; i++) {
    const ok = await fetch(`${url}/ok`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const stop = () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  return { url, stop };
}

/** One call to a LangGraph server's API; resolves with its JSON (fails the test on an error status). */
export async function langgraphCall(server, method, path, body) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.ok, `${method} ${path}: ${response.status}`).toBe(true);
  return response.json();
}

/** A new thread of a graph, run until it waits on a human: the hand-written
 * graph's `case`, or a LangChain agent's first turn. */
export async function interruptedThread(server, kase, graph = "agent") {
  const thread = await langgraphCall(server, "POST", "/threads", {});
  const input = graph === "agent" ? { case: kase } : { messages: [{ role: "user", content: kase }] };
  const run = await langgraphCall(server, "POST", `/threads/${thread.thread_id}/runs/wait`, { assistant_id: graph, input });
  expect(run.__interrupt__?.length, `${graph} ${kase} interrupts`).toBeGreaterThan(0);
  return thread.thread_id;
}

/** Signs as `role`, picked from the roles the server says the key holds. */
export async function chooseRole(page, role) {
  const picker = page.locator("select#decided-by-role");
  await expect(picker).toBeVisible();
  await picker.selectOption(role);
}
