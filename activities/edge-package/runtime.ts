// The runtime files a package carries for the robot (policy server, robot client, launch script, Dockerfile,
// compose file, pinned requirements). Their content is the runtime's own module; this is the one call that asks.
import type { PackageManifest } from '../../api/edge-packages/manifest'
import type { PackFile } from './archive'

export function runtimeFilesFor(_manifest: PackageManifest): PackFile[] {
  return []
}
