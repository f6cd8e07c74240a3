// What rcp prints: tables for people, one JSON document for scripts (--json), and progress on stderr only when it is
// a terminal (a pipe or a CI log gets one line per step instead of redrawn bars).

export interface Output {
  json: boolean
  verbose: boolean
  /** Data for scripts, or a table/lines for people. */
  result(data: unknown, human: () => string): void
  /** A line for people on stderr (never in --json's stdout). */
  note(line: string): void
  debug(line: string): void
  progress(label: string, total: number): Progress
}

export interface Progress {
  update(done: number): void
  finish(line?: string): void
}

const isTty = () => Boolean(process.stderr.isTTY)

export function makeOutput(json: boolean, verbose: boolean): Output {
  return {
    json,
    verbose,
    result(data, human) {
      process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`)
    },
    note(line) {
      process.stderr.write(`${line}\n`)
    },
    debug(line) {
      if (verbose) process.stderr.write(`> ${line}\n`)
    },
    progress(label, total) {
      return isTty() ? ttyProgress(label, total) : lineProgress(label, total)
    },
  }
}

const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
export function bytes(n: number): string {
  let v = n
  let u = 0
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024
    u++
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`
}

function ttyProgress(label: string, total: number): Progress {
  let last = 0
  const draw = (done: number) => {
    const width = 30
    const share = total > 0 ? Math.min(1, done / total) : 1
    const bar = '#'.repeat(Math.round(share * width)).padEnd(width, '.')
    process.stderr.write(`\r${label} [${bar}] ${(share * 100).toFixed(0).padStart(3)}% ${bytes(done)}/${bytes(total)}\x1b[K`)
  }
  return {
    update(done) {
      const now = performance.now()
      if (now - last < 100 && done < total) return // redraw at most ten times a second
      last = now
      draw(done)
    },
    finish(line) {
      draw(total)
      process.stderr.write(`\n${line ? `${line}\n` : ''}`)
    },
  }
}

function lineProgress(_label: string, _total: number): Progress {
  return {
    update() {},
    finish(line) {
      if (line) process.stderr.write(`${line}\n`)
    },
  }
}

/** Columns padded to their widest cell; a cell is text on one line. */
export function table(header: string[], rows: (string | number | null | undefined)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c).replace(/\s+/g, ' '))))]
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)))
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : (c ?? '').padEnd(widths[i]!))).join('  ')).join('\n')
}
