// Measures the reviewer app in headless chromium against the release build in
// dist/ (budgets of the reviewer-app issue). Prints figures; asserts nothing, so
// a noisy machine never fails a build. Usage: node scripts/measure-app.mjs
//   - inbox with N reviews in local storage: time from the wasm starting
//     (mark countersign:start) to the inbox rendered (countersign:inbox-ready),
//     and one search keystroke until the list is redrawn;
//   - review page of a plan of 1,000 steps: start to plan drawn when opened by
//     its address, and click to plan drawn when opened from the inbox.
// Each case runs 5 times in a fresh browser context; median and range are shown.
import { spawn } from "node:child_process";
import { chromium } from "@playwright/test";

const port = 4619;
const server = spawn("node", ["scripts/serve-dist.mjs", "dist", String(port)], { stdio: "ignore" });
await new Promise((r) => setTimeout(r, 500));
const base = `http://127.0.0.1:${port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
});

const id = (prefix, n) => `${prefix}-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
const meta = { protocol_version: "1.0.0", schema_version: "1.0.0" };

function review(n, steps) {
  const plan = id("bbbbbbbb", n);
  return {
    confirm: {
      meta, confirm_id: id("aaaaaaaa", n), target_type: "plan", target_id: plan, status: n % 4 === 0 ? "approved" : "pending",
      requested_by_role: `agent-${n % 7}`, requested_at: new Date(Date.UTC(2026, 10, 1) + n * 60000).toISOString(),
      reason: `Request number ${n} to change production settings`,
      // Every fourth one is decided, with its decision in the history.
      ...(n % 4 === 0 && { decisions: [{ decision_id: id("eeeeeeee", n), status: "approved", decided_by_role: "reviewer", decided_at: new Date(Date.UTC(2026, 10, 2) + n * 60000).toISOString(), reason: "Checked" }] }),
    },
    target: { plan: {
      meta, plan_id: plan, context_id: id("cccccccc", 1), title: `Plan ${n}: migrate shard ${n}`, objective: "Keep data safe", status: "proposed",
      steps: Array.from({ length: steps }, (_, i) => ({
        step_id: id(`d${(n % 0xfffffff).toString(16).padStart(7, "0")}`, i), description: `Step ${i} of plan ${n}: copy shard and verify`,
        status: "pending", agent_role: "migrator",
        dependencies: i === 0 ? [] : [id(`d${(n % 0xfffffff).toString(16).padStart(7, "0")}`, i - 1 - (i % 40 === 0 ? 0 : Math.floor((i * 7919) % Math.min(i, 12))))],
      })),
    } },
  };
}

async function seeded(reviews) {
  const context = await browser.newContext();
  const entries = reviews.map((r) => [`countersign.v1.review.${r.confirm.confirm_id}`, JSON.stringify(r)]);
  await context.addInitScript((entries) => {
    if (localStorage.getItem("countersign.v1.seeded")) return;
    localStorage.setItem("countersign.v1.seeded", "1");
    for (const [k, v] of entries) localStorage.setItem(k, v);
  }, entries);
  return context;
}

const since = (page, from, to) => page.evaluate(([from, to]) => {
  const a = performance.getEntriesByName(from)[0], b = performance.getEntriesByName(to)[0];
  return a && b ? b.startTime - a.startTime : NaN;
}, [from, to]);

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)].toFixed(1)} ms (min ${s[0].toFixed(1)}, max ${s[s.length - 1].toFixed(1)})`;
};

// ONLY=toolcalls measures the tool-call editor alone.
const only = process.env.ONLY;
for (const count of only ? [] : [100, 1000, 10000]) {
  const reviews = Array.from({ length: count }, (_, n) => review(n + 1, 3));
  const load = [], search = [], heap = [];
  for (let run = 0; run < 5; run++) {
    const context = await seeded(reviews);
    const page = await context.newPage();
    await page.goto(base + "/");
    await page.waitForFunction(() => performance.getEntriesByName("countersign:inbox-ready").length > 0, null, { timeout: 60000 });
    load.push(await since(page, "countersign:start", "countersign:inbox-ready"));
    if (run === 0) {
      const split = await Promise.all([["countersign:start", "countersign:read"], ["countersign:read", "countersign:parsed"], ["countersign:parsed", "countersign:loaded"], ["countersign:loaded", "countersign:inbox-ready"]].map(([a, b]) => since(page, a, b)));
      const stored = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("countersign.v1.review.")).length);
      console.log(`  ${count} requested, ${stored} stored: read storage ${split[0].toFixed(1)} ms, parse ${split[1].toFixed(1)} ms, index ${split[2].toFixed(1)} ms, render ${split[3].toFixed(1)} ms`);
    }
    search.push(await page.evaluate(async () => {
      const input = document.getElementById("search");
      const t0 = performance.now();
      input.value = "shard 7";
      input.dispatchEvent(new Event("input", { bubbles: true }));
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      return performance.now() - t0;
    }));
    heap.push(await page.evaluate(() => performance.memory?.usedJSHeapSize / 1048576 ?? NaN));
    await context.close();
  }
  console.log(`inbox, ${String(count).padStart(5)} reviews: interactive ${stats(load)}; search keystroke ${stats(search)}; JS heap ${stats(heap).replace(/ ms/g, " MB")}`);
}

const plan = [review(424242, 1000)];
const drawn = [], opened = [];
for (let run = 0; run < (only ? 0 : 5); run++) {
  const context = await seeded(plan);
  const page = await context.newPage();
  await page.goto(`${base}/reviews/${plan[0].confirm.confirm_id}`);
  await page.waitForFunction(() => performance.getEntriesByName("countersign:plan-drawn").length > 0, null, { timeout: 60000 });
  drawn.push(await since(page, "countersign:start", "countersign:plan-drawn"));
  if (run === 0) {
    const nodes = await page.getByRole("button", { name: /^Step \d+:/ }).count();
    console.log(`review page: ${nodes} step nodes drawn`);
  }
  // The reviewer's path: from the inbox, once the page's code was fetched ahead.
  await page.goto(`${base}/`);
  await page.waitForFunction(() => performance.getEntriesByName("countersign:inbox-ready").length > 0, null, { timeout: 60000 });
  await page.waitForTimeout(2000);
  await page.evaluate(() => performance.mark("measure:open"));
  await page.getByRole("list", { name: "Reviews" }).getByRole("link").first().click();
  await page.waitForFunction(() => performance.getEntriesByName("countersign:plan-drawn").length > 0, null, { timeout: 60000 });
  opened.push(await since(page, "measure:open", "countersign:plan-drawn"));
  await context.close();
}
if (!only) {
  console.log(`review page, 1,000-step plan: drawn ${stats(drawn)} after the wasm starts (opened by its address: its code is fetched then)`);
  console.log(`review page, 1,000-step plan: drawn ${stats(opened)} after the click in the inbox (its code fetched ahead)`);
}

// Tool calls: the modified-arguments editor re-parses, re-canonicalizes and
// re-hashes on every keystroke (measure countersign:args-preview, plus the
// whole keystroke until its effects ran); opening it on a 1 MB call measures
// canonicalizing and hashing 1 MB in the browser.
const canonical = (v) =>
  Array.isArray(v) ? `[${v.map(canonical).join(",")}]`
    : v && typeof v === "object" ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`
      : JSON.stringify(v);
const { createHash } = await import("node:crypto");
function toolCallReview(n, bytes) {
  const args = {};
  for (let i = 0; args && JSON.stringify(args).length < bytes; i++) args[`field_${i}`] = `value ${i} `.padEnd(90, "x");
  const text = canonical({ name: "bulk_update", args });
  const approvalId = id("eeeeeeee", n), at = new Date();
  return {
    confirm: { meta, confirm_id: id("ffffffff", n), target_type: "other", target_id: approvalId, status: "pending",
      requested_by_role: "bulk-agent", requested_at: at.toISOString(), reason: "bulk update" },
    target: { tool_call: { request: {
      approvalId, sessionId: "bench", runId: "r", toolCallCanonical: text, toolCallHash: createHash("sha256").update(text).digest("hex"),
      humanSummary: "bulk_update", riskTier: "R2", requestedAt: at.toISOString(), expiresAt: new Date(at.getTime() + 3600000).toISOString(),
    } } },
  };
}
for (const [label, bytes, keystrokes] of [["10 KB", 10_000, 20], ["1 MB", 1_000_000, 0]]) {
  const call = toolCallReview(bytes, bytes);
  const opened = [], hashed = [], previews = [], frames = [];
  for (let run = 0; run < 3; run++) {
    const context = await seeded([call]);
    const page = await context.newPage();
    await page.goto(`${base}/reviews/${call.confirm.confirm_id}`);
    await page.getByLabel("Approve with modifications").check();
    await page.waitForFunction(() => performance.getEntriesByName("countersign:args-preview").length > 0, null, { timeout: 60000 });
    opened.push(await page.evaluate(() => performance.getEntriesByName("countersign:args-preview")[0].duration));
    hashed.push(await page.evaluate(() => performance.getEntriesByName("countersign:canonical-hash")[0].duration));
    if (run === 0) console.log(`  ${label}: of which canonicalize ${(await page.evaluate(() => performance.getEntriesByName("countersign:canonical")[0].duration)).toFixed(1)} ms`);
    for (let k = 0; k < keystrokes; k++) {
      frames.push(await page.evaluate(async (k) => {
        const editor = document.getElementById("edited-args");
        const at = editor.value.indexOf("value 1 ") + 8;
        const t0 = performance.now();
        editor.value = editor.value.slice(0, at) + String.fromCharCode(97 + (k % 26)) + editor.value.slice(at);
        editor.dispatchEvent(new Event("input", { bubbles: true }));
        await new Promise((r) => setTimeout(r, 0));
        return performance.now() - t0;
      }, k));
    }
    const all = await page.evaluate(() => performance.getEntriesByName("countersign:args-preview").map((e) => e.duration));
    previews.push(...all.slice(1));
    await context.close();
  }
  const typing = keystrokes ? `; per keystroke: preview ${stats(previews)}, handled and redrawn ${stats(frames)}` : "";
  console.log(`tool call ${label}: canonicalize + hash ${stats(hashed)}; with parse and diff on opening the editor ${stats(opened)}${typing}`);
}
await browser.close();
server.kill();
