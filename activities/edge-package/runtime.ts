// The runtime files a package carries for the robot (policy server, robot client, launch script, Dockerfile,
// compose file, pinned requirements). Their content is the runtime's own module; this is the one call that asks.
import { ApplicationFailure } from '@temporalio/activity'
import type { PackageManifest } from '../../api/edge-packages/manifest'
import { ErrorType } from '../../workflows/contract'
import type { PackFile } from './archive'
import { RuntimeFilesError, runtimeFiles } from './runtime-files'

/** A manifest the runtime cannot serve (say local lerobot without lerobot-grpc) fails the build for good, with the
 *  runtime's reason: a retry would read the same manifest. */
export function runtimeFilesFor(manifest: PackageManifest): PackFile[] {
  try {
    return runtimeFiles(manifest)
  } catch (err) {
    if (err instanceof RuntimeFilesError) throw ApplicationFailure.create({ type: ErrorType.invalidArgument, message: err.message, nonRetryable: true })
    throw err
  }
}
