// Edge inference packages: the request form with every field and its limits, the build's progress, the artifact
// with the verification commands and the signing key, and the runs a robot reported: round-trip p50/p99 over time
// as a chart, and contract violations.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from './api'
import type { PageProps } from './page'
import type { components } from './api-types.gen'
import { ProblemMessage } from './problem'
import { ProjectFilter } from './project-filter'
import { Empty, Show, useAction, useLoad, when } from './ui'

type Request = components['schemas']['EdgeInferencePackageRequestDto']
type Package = components['schemas']['EdgeInferencePackageDto']
type Run = components['schemas']['EdgePackageRunDto']
const ARCHES: NonNullable<Request['targetArch']>[] = ['cpu', 'x86-cuda', 'jetson-jp6']
const PROTOCOLS: NonNullable<Request['wireProtocols']>[number][] = ['openpi-ws', 'lerobot-grpc']
const building = (p: Package) => p.status !== 'ready' && p.status !== 'failed'

export function Packages({ can }: PageProps) {
  const [project, setProject] = useState('')
  const [list, reload] = useLoad(
    () => must(api.GET('/v1/edge-inference-packages', { params: { query: { pageSize: 50, projectId: project || undefined } } })),
    [project],
  )
  const [open, setOpen] = useState<string | null>(null)
  useEffect(() => {
    if (list.state !== 'ready' || !list.value.data.some(building)) return
    const t = setInterval(reload, 1000)
    return () => clearInterval(t)
  }, [list, reload])
  return (
    <>
      {can('model:write') && (
        <RequestForm
          onRequested={(id) => {
            setOpen(id)
            reload()
          }}
        />
      )}
      <section aria-labelledby="packages-title">
        <h2 id="packages-title">Packages</h2>
        <div class="filters">
          <ProjectFilter id="package-project" value={project} onChange={setProject} />
        </div>
        <Show loaded={list}>
          {(page) =>
            page.data.length === 0 ? (
              <Empty>No package yet.</Empty>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Requested</th>
                    <th scope="col">Mode</th>
                    <th scope="col">Target</th>
                    <th scope="col">Status</th>
                    <th scope="col">Progress</th>
                    <th scope="col">
                      <span class="sr-only">Action</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((p) => (
                    <tr key={p.id}>
                      <td>{when(p.createdAt)}</td>
                      <td>{p.mode}</td>
                      <td>{p.targetArch}</td>
                      <td>
                        {p.status}
                        {p.failureReason ? `: ${p.failureReason}` : ''}
                      </td>
                      <td>
                        <progress
                          value={p.progress.bytesDone}
                          max={p.progress.bytesTotal ?? 1}
                          aria-label={`Build progress of the package requested ${when(p.createdAt)}`}
                        />
                      </td>
                      <td>
                        <button type="button" onClick={() => setOpen(p.id)} aria-label={`Open the package requested ${when(p.createdAt)}`}>
                          Open
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Show>
      </section>
      {open && <PackageDetail key={open} id={open} />}
    </>
  )
}

function RequestForm({ onRequested }: { onRequested: (id: string) => void }) {
  const [versions] = useLoad(() => must(api.GET('/v1/model-versions', { params: { query: { status: 'ready', pageSize: 100 } } })), [])
  const [profiles] = useLoad(() => must(api.GET('/v1/embodiment-profiles', { params: { query: { pageSize: 100 } } })), [])
  const [action, run] = useAction()
  const [mode, setMode] = useState<Request['mode']>('remote_ws')
  const submit = (e: Event) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget as HTMLFormElement)
    const strategyKey = String(f.get('strategy') ?? '').trim()
    const body: Request = {
      embodimentProfileId: String(f.get('profile')),
      mode,
      steps: Number(f.get('steps')),
      targetArch: f.get('arch') as Request['targetArch'],
      wireProtocols: f.getAll('protocols').map(String) as Request['wireProtocols'],
      useFakeTransport: f.get('fake') === 'on',
      ...(strategyKey ? { strategyKey } : {}),
      ...(mode === 'remote_ws' ? { remotePolicyHost: String(f.get('host')), remotePolicyPort: Number(f.get('port')) } : {}),
    }
    return run(async () => {
      const { data } = await must(
        api.POST('/v1/model-versions/{modelVersionId}/edge-inference-package', { params: { path: { modelVersionId: String(f.get('version')) } }, body }),
      )
      onRequested(data.id)
    })
  }
  return (
    <section aria-labelledby="request-title">
      <h2 id="request-title">Request a package</h2>
      <Show loaded={versions}>
        {(v) =>
          v.data.length === 0 ? (
            <Empty>No model version is ready to package.</Empty>
          ) : (
            <Show loaded={profiles}>
              {(p) =>
                p.data.length === 0 ? (
                  <Empty>Create an embodiment profile first (Models).</Empty>
                ) : (
                  <form onSubmit={submit}>
                    <label for="pkg-version">Model version (ready)</label>
                    <select id="pkg-version" name="version">
                      {v.data.map((x) => (
                        <option key={x.id} value={x.id}>
                          {x.name} ({x.format})
                        </option>
                      ))}
                    </select>
                    <label for="pkg-profile">Embodiment profile</label>
                    <select id="pkg-profile" name="profile">
                      {p.data.map((x) => (
                        <option key={x.id} value={x.id}>
                          {x.name}
                        </option>
                      ))}
                    </select>
                    <label for="pkg-mode">Mode</label>
                    <select id="pkg-mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as Request['mode'])}>
                      <option value="remote_ws">remote_ws: the robot client, pointed at a policy server</option>
                      <option value="local">local: policy server and robot client on the device</option>
                    </select>
                    {mode === 'remote_ws' && (
                      <>
                        <label for="pkg-host">Policy server host (name or IP address)</label>
                        <input id="pkg-host" name="host" required maxLength={253} />
                        <label for="pkg-port">Policy server port (1 to 65535)</label>
                        <input id="pkg-port" name="port" type="number" min={1} max={65535} required />
                      </>
                    )}
                    <label for="pkg-steps">Steps a run drives (1 to 100,000)</label>
                    <input id="pkg-steps" name="steps" type="number" min={1} max={100000} required defaultValue="1000" />
                    <label for="pkg-arch">Target</label>
                    <select id="pkg-arch" name="arch">
                      {ARCHES.map((a) => (
                        <option key={a} value={a}>
                          {a}
                        </option>
                      ))}
                    </select>
                    <fieldset>
                      <legend>Wire protocols (lerobot-grpc only on x86-cuda and jetson-jp6)</legend>
                      {PROTOCOLS.map((w) => (
                        <label key={w} class="check">
                          <input type="checkbox" name="protocols" value={w} defaultChecked={w === 'openpi-ws'} /> {w}
                        </label>
                      ))}
                    </fieldset>
                    <label for="pkg-strategy">Strategy key (optional)</label>
                    <input id="pkg-strategy" name="strategy" maxLength={200} pattern="[A-Za-z0-9._:/@+\-]+" />
                    <label class="check">
                      <input type="checkbox" name="fake" /> Synthetic observations instead of hardware (fake transport)
                    </label>
                    <button type="submit" disabled={action.busy}>
                      Request package
                    </button>
                  </form>
                )
              }
            </Show>
          )
        }
      </Show>
      <ProblemMessage problem={action.problem} />
    </section>
  )
}

function PackageDetail({ id }: { id: string }) {
  const path = { params: { path: { packageId: id } } }
  const [pkg, reload] = useLoad(() => must(api.GET('/v1/edge-inference-packages/{packageId}', path)).then((r) => r.data), [id])
  const [runs, reloadRuns] = useLoad(
    () => must(api.GET('/v1/edge-inference-packages/{packageId}/runs', { params: { path: { packageId: id }, query: { pageSize: 100 } } })),
    [id],
  )
  const [keys] = useLoad(() => must(api.GET('/v1/edge-inference-packages/signing-keys')).then((r) => r.data), [])
  useEffect(() => {
    if (pkg.state !== 'ready' || !building(pkg.value)) return
    const t = setTimeout(reload, 1000)
    return () => clearTimeout(t)
  }, [pkg, reload])
  return (
    <section aria-labelledby="package-title" class="panel">
      <h2 id="package-title">Package</h2>
      <Show loaded={pkg}>
        {(p) => (
          <>
            <p id="package-state">
              {p.status}
              {p.failureReason ? `: ${p.failureReason}` : ''}; {p.progress.bytesDone} of {p.progress.bytesTotal ?? '?'} model bytes packed.
            </p>
            {p.artifact && (
              <>
                <p>
                  {p.artifact.sizeBytes} bytes, SHA-256 <code>{p.artifact.sha256}</code>.{' '}
                  <a href={p.artifact.downloadUrl} download>
                    Download
                  </a>{' '}
                  (link valid until {when(p.artifact.downloadUrlExpiresAt)}).
                </p>
                <h3>Verify it</h3>
                <pre id="verify-commands">{verifyCommands(location.origin, p.id)}</pre>
                <Show loaded={keys}>
                  {(k) => (
                    <>
                      {k
                        .filter((x) => x.current)
                        .map((x) => (
                          <details key={x.keyId}>
                            <summary>
                              Signing key {x.keyId} ({x.algorithm})
                            </summary>
                            <pre>{x.publicKeyPem}</pre>
                          </details>
                        ))}
                    </>
                  )}
                </Show>
              </>
            )}
          </>
        )}
      </Show>
      <h3>Runs</h3>
      <button
        type="button"
        onClick={() => {
          reload()
          reloadRuns()
        }}
      >
        Refresh
      </button>
      <Show loaded={runs}>{(r) => (r.data.length === 0 ? <Empty>No run reported yet.</Empty> : <RunsView runs={r.data} />)}</Show>
    </section>
  )
}

const verifyCommands = (
  origin: string,
  id: string,
) => `curl -fsS "${origin}/v1/edge-inference-packages/${id}" -H "Authorization: Bearer $PAT" | jq -r .data.artifact.downloadUrl | xargs curl -fsSo pkg.tar.gz
mkdir pkg && tar -xzf pkg.tar.gz -C pkg && cd pkg
sha256sum --strict -c SHA256SUMS
curl -fsS "${origin}/v1/edge-inference-packages/signing-keys" | jq -r '.data[0].publicKeyPem' > pub.pem
T=$(jq -r .payloadType provenance.intoto.jsonl); jq -r .payload provenance.intoto.jsonl | base64 -d > payload.json
{ printf 'DSSEv1 %d %s %d ' "\${#T}" "$T" "$(stat -c %s payload.json)"; cat payload.json; } > pae.bin
jq -r '.signatures[0].sig' provenance.intoto.jsonl | base64 -d > sig.bin
openssl pkeyutl -verify -pubin -inkey pub.pem -rawin -in pae.bin -sigfile sig.bin`

/** Round-trip p50 and p99 of each run in time order as two lines (SVG attributes only: the CSP allows no inline
 *  style), and every run in a table beside it. */
function RunsView({ runs }: { runs: Run[] }) {
  const ordered = [...runs].sort((a, b) => a.finishedAt.localeCompare(b.finishedAt))
  const timed = ordered.filter((r) => r.latencyMs)
  const max = Math.max(1, ...timed.map((r) => r.latencyMs!.p99))
  const x = (i: number) => 40 + (timed.length === 1 ? 0 : (440 * i) / (timed.length - 1))
  const y = (ms: number) => 150 - (130 * ms) / max
  const line = (pick: (r: Run) => number) => timed.map((r, i) => `${x(i)},${y(pick(r))}`).join(' ')
  return (
    <>
      {timed.length > 0 && (
        <svg role="img" aria-label={`Round-trip latency of ${timed.length} runs: p50 and p99, up to ${max} ms`} width="500" height="170" class="chart">
          <polyline points={line((r) => r.latencyMs!.p99)} class="p99" />
          <polyline points={line((r) => r.latencyMs!.p50)} class="p50" />
          <text x="0" y="20">
            {max} ms
          </text>
          <text x="0" y="150">
            0
          </text>
          <text x="300" y="168">
            p50 (solid) · p99 (dashed)
          </text>
        </svg>
      )}
      <table>
        <thead>
          <tr>
            <th scope="col">Finished</th>
            <th scope="col">Steps</th>
            <th scope="col">p50 ms</th>
            <th scope="col">p99 ms</th>
            <th scope="col">Exit</th>
            <th scope="col">Contract violations</th>
          </tr>
        </thead>
        <tbody>
          {ordered.map((r) => (
            <tr key={r.id}>
              <td>{when(r.finishedAt)}</td>
              <td>{r.stepsDone}</td>
              <td>{r.latencyMs?.p50 ?? '—'}</td>
              <td>{r.latencyMs?.p99 ?? '—'}</td>
              <td>{r.exitReason}</td>
              <td>
                {r.contractViolations}
                {r.violations.length > 0 && `: ${r.violations.map((v) => `${v.feature} expected ${v.expected}, got ${v.got}`).join('; ')}`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  )
}
