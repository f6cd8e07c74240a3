// Streaming a checkpoint through an activity makes one dropped Buffer per chunk read. Bun (JavaScriptCore) frees
// the memory behind dropped Buffers only when it collects, and streaming makes garbage faster than it decides to:
// without a collection now and then, a worker's peak RSS grows with the checkpoint (+150 MB from 50 to 500 MB in
// bench/edge-package.ts before the package build collected). A full collection every 8 MiB streamed keeps the
// garbage between two of them small, and costs a few milliseconds each.

export const COLLECT_EVERY_BYTES = 8 * 1024 * 1024

export const collectStreamedGarbage = () => (globalThis as { Bun?: { gc(sync: boolean): void } }).Bun?.gc(true)

/** Counts bytes streamed and collects once every COLLECT_EVERY_BYTES of them. */
export function garbageCollector(): (bytes: number) => void {
  let since = 0
  return (bytes) => {
    since += bytes
    if (since < COLLECT_EVERY_BYTES) return
    since = 0
    collectStreamedGarbage()
  }
}
