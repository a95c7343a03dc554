// What each crate's code weighs in a wasm built with its name section (before
// wasm-bindgen and wasm-opt strip it): the size of every function body,
// grouped by the crate its (legacy-mangled) Rust name starts with; for a
// trait method called on a type (`<T as Trait>::f`), the type's crate, else
// the trait's.

/** Reads an unsigned LEB128 at `at`; returns [value, next offset]. */
function leb(bytes, at) {
  let value = 0, shift = 0, byte;
  do {
    byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [value, at];
}

const decoder = new TextDecoder();

/** The crate a mangled Rust symbol belongs to (`core`, `serde_json`, ...). */
export function crateOf(symbol) {
  const body = symbol.match(/^_ZN(\d+)(.*)$/s);
  if (!body) {
    if (symbol.includes("__wbindgen_describe")) return "(wasm-bindgen descriptors, removed at build)";
    return symbol.startsWith("__") || symbol.startsWith("_Z") ? "(runtime)" : "(other)";
  }
  const first = body[2].slice(0, Number(body[1]));
  const qualified = first.match(/^_?\$LT\$(.*)\$GT\$$/s);
  if (!qualified) return first;
  const inner = qualified[1].replace(/\$RF\$|\$BP\$|mut\$u20\$|\$u5b\$/g, "");
  const [self, trait] = inner.split("$u20$as$u20$");
  const crate = (path) => path?.match(/^([a-z_][a-z0-9_]*)\.\./)?.[1];
  return crate(self) ?? crate(trait) ?? "generic";
}

/** [[crate, bytes, share], ...], largest first. */
export function crateShares(bytes) {
  let at = 8, imported = 0;
  const bodies = [], names = new Map();
  while (at < bytes.length) {
    const id = bytes[at++];
    let size;
    [size, at] = leb(bytes, at);
    const end = at + size;
    if (id === 2) {
      let count, p = at;
      [count, p] = leb(bytes, p);
      for (let i = 0; i < count; i++) {
        for (let s = 0; s < 2; s++) {
          let len;
          [len, p] = leb(bytes, p);
          p += len;
        }
        const kind = bytes[p++];
        if (kind === 0) {
          imported++;
          [, p] = leb(bytes, p);
        } else if (kind === 1) {
          p++;
          const flags = bytes[p++];
          [, p] = leb(bytes, p);
          if (flags & 1) [, p] = leb(bytes, p);
        } else if (kind === 2) {
          const flags = bytes[p++];
          [, p] = leb(bytes, p);
          if (flags & 1) [, p] = leb(bytes, p);
        } else if (kind === 3) p += 2;
        else if (kind === 4) p += 2;
      }
    } else if (id === 10) {
      let count, p = at;
      [count, p] = leb(bytes, p);
      for (let i = 0; i < count; i++) {
        let len;
        [len, p] = leb(bytes, p);
        bodies.push(len);
        p += len;
      }
    } else if (id === 0) {
      let len, p = at;
      [len, p] = leb(bytes, p);
      const name = decoder.decode(bytes.subarray(p, p + len));
      p += len;
      if (name === "name") {
        while (p < end) {
          const sub = bytes[p++];
          let subSize;
          [subSize, p] = leb(bytes, p);
          if (sub === 1) {
            let count, q = p;
            [count, q] = leb(bytes, q);
            for (let i = 0; i < count; i++) {
              let index, nameLen;
              [index, q] = leb(bytes, q);
              [nameLen, q] = leb(bytes, q);
              names.set(index, decoder.decode(bytes.subarray(q, q + nameLen)));
              q += nameLen;
            }
          }
          p += subSize;
        }
      }
    }
    at = end;
  }
  const totals = new Map();
  let all = 0;
  bodies.forEach((size, i) => {
    const crate = crateOf(names.get(imported + i) ?? "");
    totals.set(crate, (totals.get(crate) ?? 0) + size);
    all += size;
  });
  return [...totals].sort((a, b) => b[1] - a[1]).map(([crate, size]) => [crate, size, size / all]);
}
