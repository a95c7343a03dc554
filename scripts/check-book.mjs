// Checks the docs book offline: every link of every chapter resolves. Links
// within the book (to a page, a picture or a heading's anchor) are checked in
// the built HTML; links that leave docs/ name files of this repository (the
// code, its configurations, SECURITY.md) and are checked to exist there.
// Prints what is broken, page by page, and exits 1 if anything is.
// Usage: node scripts/check-book.mjs <docs-dir> <built-book-dir>
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const [docsArg, bookArg] = process.argv.slice(2);
if (!docsArg || !bookArg) throw new Error("usage: node scripts/check-book.mjs <docs-dir> <built-book-dir>");
const docs = resolve(docsArg);
const book = resolve(bookArg);
const broken = [];
const external = /^(https?:|mailto:|data:|javascript:)/;

// The sources: links leaving docs/ must name a file of the repository.
for (const name of readdirSync(docs).filter((f) => f.endsWith(".md"))) {
  const text = readFileSync(join(docs, name), "utf8").replace(/```[\s\S]*?```/g, "");
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (external.test(target) || target.startsWith("#")) continue;
    const path = resolve(docs, target.split("#")[0]);
    if (!existsSync(path)) broken.push(`${name}: ${target} (no such file)`);
  }
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
  console.error(`The docs book has ${broken.length} broken link(s):\n  ${broken.join("\n  ")}`);
  process.exit(1);
}
console.log(`${book}: ${pages.length} pages, every link resolves`);
