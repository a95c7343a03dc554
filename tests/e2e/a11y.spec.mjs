// An accessibility audit of every screen with axe-core (npm, through
// @axe-core/playwright), at desktop and phone width and in the dark theme: no
// violation of WCAG 2.0/2.1 level A or AA. The screens are the local demo's (the inbox, plan
// and tool-call reviews, a decided review, import, settings, grants, the
// shortcuts dialog, a missing review); the server's inbox is audited in
// scale.spec.mjs, its grants in server.spec.mjs.
import { expect, test } from "@playwright/test";
import { failOnScriptErrors, wcagViolations } from "./support.mjs";

failOnScriptErrors();

const SCREENS = [
  ["inbox", "/", "Inbox"],
  ["plan review (DAG, problems)", "/reviews/c0ffee00-0000-4000-8000-000000000001", null],
  ["plan review with a cycle", "/reviews/c0ffee00-0000-4000-8000-000000000003", null],
  ["decided plan review", "/reviews/c0ffee00-0000-4000-8000-000000000005", null],
  ["tool-call review", "/reviews/c0ffee00-0000-4000-8000-000000002002", null],
  ["import and export", "/import", "Import and export"],
  ["settings", "/settings", "Settings"],
  ["grants (none in this browser)", "/grants", "Standing approvals"],
  ["missing review", "/reviews/00000000-0000-4000-8000-000000000000", "No such review"],
];

for (const [width, label, scheme] of [[1280, "desktop", "light"], [375, "phone", "light"], [1280, "desktop", "dark"]]) {
  test(`every screen passes WCAG 2.1 A and AA at ${label} width, ${scheme} theme`, async ({ page }) => {
    // axe-core scans every screen and a dialog: on a loaded machine that nears the default limit.
    test.setTimeout(90_000);
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width, height: 900 });
    const found = {};
    for (const [name, path, heading] of SCREENS) {
      await page.goto(path);
      const h1 = page.getByRole("heading", { level: 1 });
      await expect(heading ? h1.filter({ hasText: heading }) : h1).toBeVisible();
      const violations = await wcagViolations(page);
      if (violations.length) found[name] = violations;
    }
    await page.goto("/");
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    // The shortcuts are the app's: until it starts, the inbox is its first paint's drawing.
    await expect(page.locator(".first-paint")).toHaveCount(0);
    await page.keyboard.press("?");
    await expect(page.getByRole("dialog")).toBeVisible();
    const dialog = await wcagViolations(page);
    if (dialog.length) found["shortcuts dialog"] = dialog;
    expect(found).toEqual({});
  });
}
