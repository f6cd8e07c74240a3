// Worker processes a crash test can SIGKILL: the production entry point (worker/main.ts) in a process of its own, with
// the file's settings, its log in the run's scratch directory, and every one stopped after the file's last test.
import { afterAll } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnChild, workerStarted, type Child } from '../../scripts/platform'

export function killableWorkers(tag: string, settings: Record<string, string>) {
  const logDir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), `${tag}-`))
  const workers: Child[] = []
  afterAll(async () => {
    for (const w of workers) await w.stop()
  })
  return {
    logDir,
    /** SIGKILL is its stop signal: it ends without any chance to clean up. Resolves once the worker polls its queues,
     *  so a test's own deadlines never count the workflow bundling of a loaded machine. */
    async start(name: string): Promise<Child> {
      const child = spawnChild(name, {
        cmd: [process.execPath, 'worker/main.ts'],
        // The runner's worker holds the scrape ports; these extra workers serve none.
        env: { ...process.env, ...settings, LOG_LEVEL: 'info', METRICS: 'false' },
        logFile: join(logDir, `${name}.log`),
        stopSignal: 'SIGKILL',
      })
      workers.push(child)
      await workerStarted(child)
      return child
    },
  }
}
