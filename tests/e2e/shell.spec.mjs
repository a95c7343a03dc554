// The app shell boots from the release build and shows the demo review.
import { expect, test } from "@playwright/test";

const screenshots = "tests/e2e/output/screenshots";

for (const [name, viewport] of [["desktop", { width: 1280, height: 800 }], ["phone", { width: 375, height: 740 }]]) {
  test(`shell lists the demo review (${name})`, async ({ page }) => {
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    await page.setViewportSize(viewport);
    await page.goto("/");
    await expect(page.getByRole("heading", { level: 1, name: "Waiting for your decision" })).toBeVisible();
    const reviews = page.getByRole("list", { name: "Reviews" });
    await expect(reviews.getByRole("listitem")).toHaveCount(1);
    await expect(reviews.getByRole("listitem").first()).toContainText("Plan: Database Migration Plan");
    await expect(reviews.getByRole("listitem").first()).toContainText("asked by agent");
    await expect(page.getByRole("main")).toBeVisible();
    await expect(page.getByRole("banner")).toContainText("Countersign");
    await page.screenshot({ path: `${screenshots}/shell-${name}.png`, fullPage: true });
    expect(errors).toEqual([]);
  });
}
