// From the API to the robot acting: a remote_ws / openpi-ws package built by the runner's worker, downloaded through
// its URL and checked, its own hash-pinned requirements installed in a venv, its launcher run with fake transport
// against a test policy server speaking openpi's websocket protocol, and the run reported back to this API with the
// token given at launch (never in the package).
import { afterAll, describe, expect, test } from 'bun:test'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { useApiAndTemporal } from '../storage/helpers'
import { launchPackage } from '../support/edge-package'
import { patFor } from '../support/fixtures'
import { startOpenpiServer, type OpenpiTestServer } from '../support/openpi-server'
import { pythonVenv } from '../support/python-venv'
import { makeVersion, modelTenant, packageIn } from './helpers'

const env = useApiAndTemporal()
const servers: OpenpiTestServer[] = []
afterAll(() => { for (const s of servers) s.stop() })

const observationFeatures = [
  { name: 'observation/image', dtype: 'uint8', shape: [8, 8, 3], kind: 'image' },
  { name: 'observation/state', dtype: 'float32', shape: [7], kind: 'state' },
]
const actionFeatures = [{ name: 'actions', dtype: 'float32', shape: [7], kind: 'action' }]

describe('a package on the robot', () => {
  test('downloaded, verified, installed from its own requirements, it drives `steps` actions and reports the run', async () => {
    const policy = startOpenpiServer({ actions: actionFeatures as never })
    servers.push(policy)
    const t = await modelTenant(env.api.url)
    const [profile] = await env.api.sql<{ id: string }[]>`
      insert into embodiment_profiles (tenant_id, name, robot_type, control_rate_hz, observation_features, action_features)
      values (${t.tenantId}, 'test arm', 'arm', 50, ${env.api.sql.json(observationFeatures)}, ${env.api.sql.json(actionFeatures)}) returning id`
    const version = await makeVersion(env.api.sql, t.tenantId, t.general, { 'policy.onnx': Buffer.from('remote policy: weights stay on the server') })
    const res = await t.models.post(`/model-versions/${version.id}/edge-inference-package`, {
      embodimentProfileId: profile!.id, mode: 'remote_ws', remotePolicyHost: '127.0.0.1', remotePolicyPort: policy.port, steps: 6, useFakeTransport: true,
    })
    expect(res.status).toBe(201)
    const pkg = await packageIn(t.models, res.json.data.id, ['ready', 'failed'])
    expect(pkg.status).toBe('ready')

    const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'robot-'))
    writeFileSync(join(dir, 'package.tar.gz'), Buffer.from(await (await fetch(pkg.artifact.downloadUrl)).arrayBuffer()))
    execFileSync('tar', ['-xzf', 'package.tar.gz'], { cwd: dir })
    execFileSync('sha256sum', ['--strict', '--quiet', '-c', 'SHA256SUMS'], { cwd: dir })
    expect(readFileSync(join(dir, 'manifest.json'), 'utf8')).not.toContain('rcp_pat_')

    const python = await pythonVenv(join(dir, 'requirements', 'robot-client.txt'))
    const token = (await patFor(t.client, ['model:write'])).token
    const run = await launchPackage(dir, python, { RCP_API_BASE: env.api.url, RCP_TOKEN: token, RCP_ACTIONS_OUT: join(dir, 'actions.jsonl') })
    expect(run.stderr).not.toContain('Traceback')
    expect(run.code).toBe(0)
    expect(policy.observations).toHaveLength(6)
    expect(policy.observations[0]!['observation/state']).toMatchObject({ dtype: '<f4', shape: [7] })
    expect(readFileSync(join(dir, 'actions.jsonl'), 'utf8').trim().split('\n')).toHaveLength(6)

    const runs = (await t.models.get(`/edge-inference-packages/${pkg.id}/runs`)).json.data
    expect(runs).toHaveLength(1)
    expect(runs[0]).toMatchObject({ packageId: pkg.id, stepsDone: 6, contractViolations: 0, exitReason: 'completed' })
    const [event] = await env.api.sql<{ data: { runId: string } }[]>`select data from events where tenant_id = ${t.tenantId} and type = 'run.finished'`
    expect(event!.data.runId).toBe(runs[0].id)
  }, 600_000)
})
