// Builds the docs book (docs/, mdBook) into target/book and checks it
// offline. The pictures the docs and the README show are kept in
// docs/screenshots/, so a reader of the repository sees them; each is a
// browser test's own screenshot (tests/e2e/output/screenshots, at 1280 and
// 375 px), which must exist (and, with --screenshots-since EPOCH_SECONDS,
// have been taken since then) and look like the kept one: a kept picture
// that differs from this run's in more than 1% of its pixels, or in size, is
// out of date (--update-screenshots copies this run's over the kept ones).
// Then every link of every chapter must resolve: links within the book (to a
// page, a picture or a heading's anchor) in the built HTML; links that leave
// docs/ name files of this repository (the code, its configurations,
// BENCHMARKS.md) and must exist there. Prints what is wrong and exits 1 if
// anything is.
// Usage: node scripts/book.mjs [--screenshots-since EPOCH_SECONDS] [--update-screenshots]
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pixelmatch from "pixelmatch";
import { PNG } from "pngjs";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const docs = join(repo, "docs");
const book = join(repo, "target/book");
const shots = join(repo, "tests/e2e/output/screenshots");
const at = process.argv.indexOf("--screenshots-since");
const since = at > 0 ? Number(process.argv[at + 1]) * 1000 : 0;
if (at > 0 && !Number.isFinite(since)) throw new Error(`--screenshots-since ${process.argv[at + 1]}: expected seconds since the epoch`);
const update = process.argv.includes("--update-screenshots");
const kept = join(docs, "screenshots");

try {
  execFileSync("mdbook", ["build", docs], { stdio: "pipe" });
} catch (error) {
  console.error(`mdbook build docs failed:\n${error.stderr ?? error.message}`);
  process.exit(1);
}
const broken = [];
const external = /^(https?:|mailto:|data:|javascript:)/;

// The sources: pictures the pages show are kept screenshots; links leaving
// docs/ must name a file of the repository.
const screenshots = new Set();
const readme = readFileSync(join(repo, "README.md"), "utf8");
for (const [, shot] of readme.matchAll(/\]\(docs\/screenshots\/([^)\s]+)\)/g)) screenshots.add(shot);
for (const name of readdirSync(docs).filter((f) => f.endsWith(".md"))) {
  const text = readFileSync(join(docs, name), "utf8").replace(/```[\s\S]*?```/g, "");
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (external.test(target) || target.startsWith("#")) continue;
    if (target.startsWith("screenshots/")) {
      screenshots.add(target.slice("screenshots/".length));
      continue;
    }
    const path = resolve(docs, target.split("#")[0]);
    if (!existsSync(path)) broken.push(`${name}: ${target} (no such file)`);
  }
}

let updated = 0;
for (const shot of screenshots) {
  const taken = join(shots, shot);
  const keptShot = join(kept, shot);
  if (!existsSync(taken)) broken.push(`screenshots/${shot} (not taken: no browser test wrote ${relative(repo, taken)})`);
  else if (statSync(taken).mtimeMs < since) broken.push(`screenshots/${shot} (taken before this run: stale)`);
  else if (update) {
    copyFileSync(taken, keptShot);
    updated += 1;
  } else if (!existsSync(keptShot)) broken.push(`docs/screenshots/${shot} (not in the repository: node scripts/book.mjs --update-screenshots keeps this run's)`);
  else {
    const differs = difference(PNG.sync.read(readFileSync(keptShot)), PNG.sync.read(readFileSync(taken)));
    if (differs) broken.push(`docs/screenshots/${shot} (out of date: ${differs}; node scripts/book.mjs --update-screenshots keeps this run's)`);
  }
}
// The kept pictures show what the browser tests show now: it is copied into the book as kept.
if (update) execFileSync("mdbook", ["build", docs], { stdio: "pipe" });

/** How a kept picture differs from this run's, or null when it is current. */
function difference(old, now) {
  if (old.width !== now.width || old.height !== now.height) {
    return `${old.width}×${old.height} px kept, ${now.width}×${now.height} px now`;
  }
  const changed = pixelmatch(old.data, now.data, null, old.width, old.height, { threshold: 0.1 });
  const share = changed / (old.width * old.height);
  return share > 0.01 ? `${(share * 100).toFixed(1)}% of its pixels changed` : null;
}

// The built pages: links within the book and their anchors.
const pages = readdirSync(book).filter((f) => f.endsWith(".html") && f !== "print.html" && f !== "toc.html");
const ids = new Map();
const idsOf = (file) => {
  if (!ids.has(file)) ids.set(file, new Set([...readFileSync(file, "utf8").matchAll(/\sid="([^"]+)"/g)].map((m) => m[1])));
  return ids.get(file);
};
for (const page of pages) {
  const file = join(book, page);
  const html = readFileSync(file, "utf8");
  // The chapter's own text, not mdBook's navigation (which names every page).
  const main = html.match(/<main>([\s\S]*?)<\/main>/)?.[1] ?? "";
  for (const [, attribute, url] of main.matchAll(/\s(href|src)="([^"]*)"/g)) {
    if (external.test(url) || url === "") continue;
    const [path, anchor] = url.split("#");
    const target = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
    if (relative(book, target).startsWith("..")) continue;
    if (!existsSync(target)) {
      broken.push(`${page}: ${attribute}="${url}" (no such page or file in the book)`);
    } else if (anchor && target.endsWith(".html") && !idsOf(target).has(decodeURIComponent(anchor))) {
      broken.push(`${page}: ${url} (no such heading)`);
    }
  }
}

if (broken.length > 0) {
  console.error(`The docs book has ${broken.length} broken link(s) or screenshot(s):\n  ${broken.join("\n  ")}`);
  process.exit(1);
}
if (update) console.log(`docs/screenshots: ${updated} pictures kept from this run's browser tests`);
console.log(`${relative(repo, book)}: ${pages.length} pages, ${screenshots.size} pictures as the browser tests show them, every link resolves`);
