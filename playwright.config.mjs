// Browser tests drive the release build (dist/) in Debian's headless chromium.
import { defineConfig } from "@playwright/test";

const port = 4517;

export default defineConfig({
  testDir: "tests/e2e",
  outputDir: "tests/e2e/output/results",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
  // The run command's test builds the app in the quick profile: the test
  // command runs it apart, once the wasm checks (which build that profile) end.
  projects: [
    { name: "desk", testIgnore: /first-run\.spec/ },
    { name: "first-run", testMatch: /first-run\.spec/ },
  ],
  webServer: {
    command: `node scripts/serve-dist.mjs dist ${port}`,
    url: `http://127.0.0.1:${port}/`,
    reuseExistingServer: false,
    stdout: "ignore",
  },
});
