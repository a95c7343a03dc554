// Renders public/icon.svg to the PNG icons the web app manifest lists (192 and
// 512 px, plus a maskable 512 with safe-zone padding), with headless chromium.
// Run after changing the icon: node scripts/make-icons.mjs
import { readFileSync } from "node:fs";
import { chromium } from "@playwright/test";

const svg = readFileSync("public/icon.svg", "utf8");
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
for (const [size, padding, file] of [[192, 0, "icon-192.png"], [512, 0, "icon-512.png"], [512, 0.1, "icon-maskable-512.png"]]) {
  const page = await browser.newPage({ viewport: { width: size, height: size } });
  const inner = Math.round(size * (1 - 2 * padding));
  await page.setContent(
    `<body style="margin:0;display:grid;place-items:center;width:${size}px;height:${size}px;background:${padding ? "#1f5fbf" : "transparent"}">` +
      `<div style="width:${inner}px;height:${inner}px">${svg.replace("<svg ", `<svg width="${inner}" height="${inner}" `)}</div></body>`,
  );
  await page.screenshot({ path: `public/${file}`, omitBackground: !padding });
  await page.close();
}
await browser.close();
