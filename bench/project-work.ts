// One project's model versions among many (issue 36, "Performance"): `bun bench/project-work.ts [--versions 100000]`
// plus the harness's flags. A tenant with 100,000 model versions spread over 10 projects and tenant-wide work (seeded
// straight into the bench's database), and:
//  - baseline: the bare SQL of one project's first page (`… where tenant_id = $1 and project_id = $2 order by
//    created_at desc, id desc limit 26`), sent through the same driver (postgres.js) from this process;
//  - the page the API reads (api/model-versions/queries.ts listModelVersions with that project's reach) through the
//    same driver;
//  - GET /v1/model-versions?projectId=… over HTTP with the owner's session, one connection.
// Target p50 < 10 ms for the two rows. Results in bench/results/project-work.json.
import { listModelVersions } from '../api/model-versions/queries'
import { createDb } from '../api/platform/db'
import { benchmark } from './harness'
import { oneAtATime } from './one-at-a-time'
import { must, ownerIn } from './rows'

const BARE = "bare SQL of one project's first page, same driver"
const PROJECTS = 10
const PAGE = 26 // a page of 25 and the one that says another page exists

await benchmark('project-work', { versions: { type: 'string' } }, async (h) => {
  const total = Number(h.flags.versions ?? 100_000)
  const pg = await h.postgres()
  const api = await h.api(pg.url)
  const sql = createDb(pg.url, { max: 1 })
  h.own({ stop: () => sql.end({ timeout: 5 }) })

  const owner = await ownerIn(api)
  const projectIds: string[] = []
  for (let i = 0; i < PROJECTS; i++) {
    const made = must(await api.call('POST', '/v1/projects', { headers: owner.session, body: { name: `p${i}`, slug: `p-${i}` } }), 201, 'project')
    projectIds.push(made.json.data.id)
  }
  // Every eleventh version tenant-wide, the others dealt round the projects; a second apart, newest last.
  await sql`
    insert into model_versions (tenant_id, project_id, name, format, source_kind, source, objects, created_at, updated_at)
    select ${owner.tenantId}, case when i % 11 = 0 then null else (${projectIds}::uuid[])[1 + i % ${PROJECTS}] end, 'v' || i, 'onnx',
           'imported_checkpoint', jsonb_build_object('kind', 'imported_checkpoint', 'path', 'ckpt/' || i || '.onnx'), '[]'::jsonb,
           now() - make_interval(secs => ${total} - i), now()
      from generate_series(1, ${total}) i`
  await sql`vacuum analyze model_versions`
  const projectId = projectIds[3]!
  const bare = () =>
    sql`select * from model_versions where tenant_id = ${owner.tenantId} and project_id = ${projectId} order by created_at desc, id desc limit ${PAGE}`
  const viaQueries = () => listModelVersions(sql, owner.tenantId, { kind: 'project', projectId }, {}, null, PAGE)
  const [a, b] = [await bare(), await viaQueries()]
  if (a.length !== PAGE || a.map((r) => r.id).join() !== b.map((r) => r.id).join()) throw new Error('the two queries answer different pages')
  const path = `/v1/model-versions?projectId=${projectId}&pageSize=25`
  const viaHttp = must(await api.call('GET', path, { headers: owner.session }), 200, 'list').json.data as { id: string }[]
  if (
    viaHttp.map((r) => r.id).join() !==
    a
      .slice(0, 25)
      .map((r) => r.id)
      .join()
  )
    throw new Error('the API answers another page')

  return {
    baselines: [{ name: BARE, run: oneAtATime(h, bare) }],
    rows: [
      { name: "one project's page (listModelVersions), same driver", run: oneAtATime(h, viaQueries), targetOf: BARE, target: 0.5, maxP50Ms: 10 },
      h.http(api, {
        name: 'GET /v1/model-versions?projectId= (session, 1 connection)',
        method: 'GET',
        path,
        headers: owner.session,
        connections: 1,
        maxP50Ms: 10,
      }),
    ],
  }
})
