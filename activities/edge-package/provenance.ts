// What the archive says about itself: SHA256SUMS (sha256sum's format, so `sha256sum -c SHA256SUMS` checks an
// unpacked package) and an in-toto v1 Statement with an SLSA provenance v1 predicate in a DSSE envelope, signed with
// the platform's Ed25519 key. Both are functions of the plan and the bytes packed, so a rebuild repeats them exactly.
import type { KeyObject } from 'node:crypto'
import { dsseSign } from '../../api/edge-packages/signing'
import type { EdgePackagePlan } from '../../workflows/contract-edge-packages'

export const PROVENANCE_PATH = 'provenance.intoto.jsonl'
export const SUMS_PATH = 'SHA256SUMS'
export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json'
/** Names this build process in every provenance; a new layout of the archive gets a new version. */
export const BUILD_TYPE = 'https://robot-control-plane.dev/edge-inference-package/build/v1'

export interface FileDigest {
  path: string
  sha256: string
}

export const sha256sums = (files: FileDigest[]) => files.map((f) => `${f.sha256}  ${f.path}\n`).join('')

/** One JSON line: the DSSE envelope. `objectDigests` are the model objects as read from storage. */
export function provenanceLine(plan: EdgePackagePlan, files: FileDigest[], objectDigests: Map<string, string>, key: KeyObject): Buffer {
  const statement = {
    _type: 'https://in-toto.io/Statement/v1',
    subject: files.map((f) => ({ name: f.path, digest: { sha256: f.sha256 } })),
    predicateType: 'https://slsa.dev/provenance/v1',
    predicate: {
      buildDefinition: {
        buildType: BUILD_TYPE,
        externalParameters: plan.request,
        internalParameters: { baseImage: plan.manifest.baseImage, platform: plan.manifest.platform, gzipLevel: plan.gzipLevel },
        resolvedDependencies: plan.objects.map((o) => ({
          uri: `s3://${plan.sourceBucket}/${o.key}`,
          name: `model/${o.path}`,
          digest: { sha256: objectDigests.get(o.key)! },
        })),
      },
      runDetails: {
        builder: { id: `${plan.manifest.apiBase}/v1/edge-inference-packages/builder` },
        metadata: { invocationId: plan.workflowId },
      },
    },
  }
  const envelope = dsseSign(key, IN_TOTO_PAYLOAD_TYPE, Buffer.from(JSON.stringify(statement)))
  return Buffer.from(`${JSON.stringify(envelope)}\n`)
}
