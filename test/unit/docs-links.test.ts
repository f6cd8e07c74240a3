// The documents hold together: every relative link in README.md, docs/*.md and bench/README.md reaches a file (and,
// with a #fragment, a heading of it), and every `bun …`, `bash …` or `./scripts/…` command they quote names files
// that exist. Needs no server: it reads the repository only.
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')

const DOCUMENTS = [
  'README.md',
  'bench/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** A document split into its prose (code spans blanked) and its code: the spans and each line of a fenced block. */
function parse(markdown: string): { prose: string[]; headings: string[]; code: string[] } {
  const prose: string[] = []
  const headings: string[] = []
  const code: string[] = []
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced
      continue
    }
    if (fenced) {
      code.push(line)
      continue
    }
    code.push(...[...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!))
    const text = line.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length))
    prose.push(text)
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading) headings.push(heading[1]!)
  }
  return { prose, headings, code }
}

/** GitHub's anchor for a heading: its text without markup, lower-cased, punctuation dropped, spaces as hyphens;
 *  a repeated anchor gets -1, -2, … in order. */
function anchors(headings: string[]): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const h of headings) {
    const base = h
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replaceAll(' ', '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

/** Every link target of the prose that points into the repository (no scheme, not a bare fragment-less mail). */
function relativeLinks(prose: string[]): string[] {
  const text = prose.join('\n')
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t))
}

/** What a link target must reach, or why it does not. */
function brokenLink(document: string, target: string, read: (path: string) => string | null): string | null {
  const [path, fragment] = target.split('#') as [string, string | undefined]
  const file = path === '' ? document : relative(ROOT, resolve(ROOT, dirname(document), decodeURIComponent(path)))
  if (file.startsWith('..')) return `${target}: outside the repository`
  if (!existsSync(join(ROOT, file))) return `${target}: no such file`
  if (fragment === undefined) return null
  if (statSync(join(ROOT, file)).isDirectory()) return `${target}: a fragment on a folder`
  const text = read(file)
  if (text === null) return `${target}: not a readable file`
  return anchors(parse(text).headings).has(decodeURIComponent(fragment)) ? null : `${target}: ${file} has no heading #${fragment}`
}

const REPO_PATH = /^(?:\.\/)?(?:api|activities|bench|docs|migrations|scripts|test|worker|workflows)\/[\w./@-]*$/

/** The files a quoted command names: the script it runs and every repository path among its arguments. */
function commandFiles(code: string): string[] {
  const files: string[] = []
  for (const line of code.split('\n')) {
    const command = line.replace(/\s#.*$/, '')
    for (const m of command.matchAll(/(?:^|[\s;&|(])((?:bun|bash)\s+\S.*|\.\/scripts\/\S.*)$/g)) {
      const words = m[1]!.split(/\s+/)
      const [head, ...rest] = words[0] === 'bun' || words[0] === 'bash' ? words.slice(1) : words
      if (head && (head.startsWith('./') || head.includes('/') || /\.(ts|sh|js)$/.test(head))) files.push(head)
      for (const w of rest) if (REPO_PATH.test(w)) files.push(w)
    }
  }
  return files
}

const readRepo = (path: string) => {
  try {
    return readFileSync(join(ROOT, path), 'utf8')
  } catch {
    return null
  }
}

describe('the documents', () => {
  test('the front page and every document of docs/ and bench/ are read, and their links and commands found', () => {
    expect(DOCUMENTS).toContain('docs/api.md')
    expect(DOCUMENTS.length).toBeGreaterThanOrEqual(8)
    const parsed = DOCUMENTS.map((d) => parse(readRepo(d)!))
    console.log(
      `${parsed.flatMap((p) => relativeLinks(p.prose)).length} relative links, ${parsed.flatMap((p) => p.code.flatMap(commandFiles)).length} files named by commands`,
    )
    expect(parsed.flatMap((p) => relativeLinks(p.prose)).length).toBeGreaterThan(50)
    expect(parsed.flatMap((p) => p.code.flatMap(commandFiles)).length).toBeGreaterThan(30)
  })

  test.each(DOCUMENTS)('%s: every relative link reaches a file, and a #fragment a heading of it', (document) => {
    const links = relativeLinks(parse(readRepo(document)!).prose)
    const broken = links.map((t) => brokenLink(document, t, readRepo)).filter((b) => b !== null)
    expect(broken).toEqual([])
  })

  test.each(DOCUMENTS)('%s: every bun, bash or ./scripts command it quotes names files that exist', (document) => {
    const missing = parse(readRepo(document)!)
      .code.flatMap(commandFiles)
      .filter((f) => !existsSync(join(ROOT, f)))
    expect(missing).toEqual([])
  })

  test.each(DOCUMENTS.filter((d) => d !== 'README.md'))('%s starts with a table of contents that lists each of its sections', (document) => {
    const text = readRepo(document)!
    const toc = text.slice(0, text.indexOf('\n## '))
    const { headings } = parse(text)
    const sections = [...anchors(headings)].filter((_, i) => /^## /.test(text.split('\n').filter((l) => /^#{1,6}\s/.test(l))[i] ?? ''))
    expect(sections.length).toBeGreaterThan(0)
    expect(sections.filter((a) => !toc.includes(`](#${a})`))).toEqual([])
  })
})

describe('the checks catch what they look for', () => {
  const doc = "# Title\n\n## Operator's handbook\n\n## A `code` heading\n\n## Twice\n\n## Twice\n\nSee `[x](nowhere.md)` in code.\n"
  const read = (path: string) => (path === 'docs/x.md' ? doc : readRepo(path))

  test('anchors follow GitHub: punctuation dropped, code kept as text, repeats numbered', () => {
    expect([...anchors(parse(doc).headings)]).toEqual(['title', 'operators-handbook', 'a-code-heading', 'twice', 'twice-1'])
  })

  test('a missing file, a missing heading and a link out of the repository are reported; good links are not', () => {
    expect(brokenLink('README.md', 'docs/no-such-file.md', read)).toContain('no such file')
    expect(brokenLink('README.md', 'docs/api.md#no-such-heading', read)).toContain('has no heading')
    expect(brokenLink('README.md', '../outside.md', read)).toContain('outside the repository')
    expect(brokenLink('README.md', 'docs/api.md', read)).toBeNull()
    expect(brokenLink('docs/api.md', '../README.md#documents', read)).toBeNull()
  })

  test('links inside code spans are not links; links with a scheme are not relative', () => {
    expect(relativeLinks(parse(doc).prose)).toEqual([])
    expect(relativeLinks(['[a](https://example.com) [b](docs/api.md#x)'])).toEqual(['docs/api.md#x'])
  })

  test('commands name their script and the repository paths among their arguments', () => {
    expect(commandFiles('bun bench/run.ts --only tokens')).toEqual(['bench/run.ts'])
    expect(commandFiles('RCP_FUZZ_EXAMPLES=200 ./scripts/test test/contract')).toEqual(['./scripts/test', 'test/contract'])
    expect(commandFiles('bash scripts/setup-servers.sh all')).toEqual(['scripts/setup-servers.sh'])
    expect(commandFiles('bun test')).toEqual([])
    expect(commandFiles('./scripts/up      # the whole platform: bun worker/none.ts')).toEqual(['./scripts/up'])
    expect(commandFiles('bun scripts/backup.ts backup <dir>')).toEqual(['scripts/backup.ts'])
  })
})
