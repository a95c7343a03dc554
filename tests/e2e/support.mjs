// Helpers shared by the browser tests.
import { expect, test } from "@playwright/test";

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

/** Full-page screenshots at desktop and at phone width, into tests/e2e/output/. */
export async function shoot(page, name) {
  for (const [label, viewport] of [["desktop", { width: 1280, height: 900 }], ["phone", { width: 375, height: 800 }]]) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: `${shots}/${name}-${label}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}
