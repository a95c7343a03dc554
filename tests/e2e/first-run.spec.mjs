// The README's first command as a newcomer runs it: `./scripts/run.sh` builds
// the app and the server (the quick profile, no trunk) and serves the demo; the
// reviewer opens the printed address, pastes the printed key, and decides.
import { expect, test } from "@playwright/test";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { freePort } from "./support.mjs";

// Building may take minutes the first time; CI built both before (scripts/test.sh).
test.setTimeout(20 * 60 * 1000);

test("run.sh serves the demo desk it prints, and a reviewer decides there", async ({ page }) => {
  const port = await freePort();
  const data = mkdtempSync(join(tmpdir(), "countersign-run-"));
  const child = spawn("scripts/run.sh", [], { env: { ...process.env, PORT: String(port), COUNTERSIGN_DATA: data, RUST_LOG: "warn" }, stdio: ["ignore", "pipe", "inherit"], detached: true });
  try {
    const printed = {};
    await new Promise((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`run.sh exited with ${code}`)));
      createInterface({ input: child.stdout }).on("line", (line) => {
        const [, binary] = line.match(/^countersign: the binary is (\S+)/) ?? [];
        if (binary) printed.binary = binary;
        if (line.startsWith("Open ")) printed.url = line.split(" ")[1];
        if (line.startsWith("Demo reviewer key")) printed.reviewer = line.split(" ").pop();
        if (printed.url && printed.reviewer) resolve();
      });
    });
    expect(printed.binary).toMatch(/\/debug\/countersign$/);
    expect(printed.url).toBe(`http://127.0.0.1:${port}/`);
    await page.goto(printed.url);
    await page.getByLabel("Reviewer key").fill(printed.reviewer);
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
    await page.goto(printed.url);
    const rows = page.locator("body:not(.painting)").getByRole("list", { name: "Reviews" }).getByRole("listitem");
    await expect(rows).toHaveCount(7);
    await rows.first().getByRole("link").click();
    await page.getByLabel(/Reason/).fill("Fine for the demo.");
    await page.getByRole("button", { name: /^Approve/ }).click();
    await expect(page.getByRole("heading", { name: "Decided" })).toBeVisible();
  } finally {
    process.kill(-child.pid, "SIGTERM");
    rmSync(data, { recursive: true, force: true });
  }
});
