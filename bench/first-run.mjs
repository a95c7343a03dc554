// A newcomer's first run, measured the way they meet it: a fresh clone of
// HEAD, an empty CARGO_HOME, CARGO_TARGET_DIR and npm cache, and a PATH with
// only the languages (cargo, rustc, rustup, node, python3) and the system's
// programs, so every tool the README's run command needs is installed by it.
// Times `./scripts/run.sh` until it prints the desk's address, then a second
// start of the same clone (everything built). Prints a table; `bench/run.mjs`
// puts it in BENCHMARKS.md (section 8). Budget: 12 minutes on 2 cores.
// Usage: node bench/first-run.mjs
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";

const root = mkdtempSync(join(tmpdir(), "countersign-first-run."));
const which = (program) => execFileSync("bash", ["-c", `command -v ${program}`], { encoding: "utf8" }).trim();
const languages = join(root, "languages");
mkdirSync(languages);
for (const program of ["cargo", "rustc", "rustup"]) symlinkSync(which(program), join(languages, program));
const path = [join(root, "cargo-home", "bin"), languages, dirname(which("node")), dirname(which("python3")), "/usr/bin", "/bin"];
const env = {
  ...process.env,
  PATH: [...new Set(path)].join(":"),
  CARGO_HOME: join(root, "cargo-home"),
  CARGO_TARGET_DIR: join(root, "target"),
  npm_config_cache: join(root, "npm-cache"),
  RUSTUP_HOME: process.env.RUSTUP_HOME ?? join(process.env.HOME, ".rustup"),
  COUNTERSIGN_DATA: join(root, "data"),
  PORT: "0",
  RUST_LOG: "warn",
};
const clone = join(root, "clone");
execFileSync("git", ["clone", "--quiet", process.cwd(), clone]);

/** Runs scripts/run.sh in the clone until the desk's address is printed: seconds. */
function start() {
  return new Promise((resolve, reject) => {
    const begun = performance.now();
    const child = spawn("scripts/run.sh", [], { cwd: clone, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const seen = [];
    let seconds;
    const read = (stream) =>
      createInterface({ input: stream }).on("line", (line) => {
        seen.push(line);
        if (seconds !== undefined || !line.startsWith("Open http")) return;
        seconds = (performance.now() - begun) / 1000;
        process.kill(-child.pid, "SIGTERM");
      });
    read(child.stdout);
    read(child.stderr);
    child.once("exit", (code) =>
      seconds !== undefined ? resolve(seconds) : reject(new Error(`run.sh exited with ${code}:\n${seen.slice(-20).join("\n")}`)),
    );
  });
}

try {
  const first = await start();
  const again = await start();
  const minutes = (s) => `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, "0")} s`;
  console.log(`first run on ${cpus().length} cores, ${new Date().toISOString().slice(0, 10)}`);
  console.log("| run | measured | budget |\n|---|---|---|");
  console.log(`| fresh clone, nothing installed but the languages, to the desk's address | **${minutes(first)}** | ≤ 12 min |`);
  console.log(`| the same clone again (everything built) | **${again.toFixed(1)} s** | |`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
