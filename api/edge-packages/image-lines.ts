// The image line each target architecture builds on. A package names its line in the manifest, the DTO and its
// Dockerfile, so an operator knows what a robot must run before unpacking anything. The Jetson line is its own
// base (L4T r36 / JetPack 6 for arm64), never a generic linux/arm64 platform: CUDA on a Jetson comes from L4T.
export const targetArchs = ['x86-cuda', 'jetson-jp6', 'cpu'] as const
export type TargetArch = (typeof targetArchs)[number]

/** The default when a request names none: it runs anywhere, so a first package never fails for want of a GPU. */
export const DEFAULT_TARGET_ARCH: TargetArch = 'cpu'

export interface ImageLine {
  /** The base image of the package's Dockerfile. */
  baseImage: string
  /** The OCI platform the image is built for. */
  platform: 'linux/amd64' | 'linux/arm64'
  /** What a reader sees in the DTO and the Temporal UI. */
  description: string
  /** Whether LeRobot's async robot_client is shipped for this line (`lerobot-grpc`). */
  hasLeRobot: boolean
}

export const imageLines: Record<TargetArch, ImageLine> = {
  'x86-cuda': {
    baseImage: 'nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04',
    platform: 'linux/amd64',
    description: 'CUDA 12.4 runtime with cuDNN on Ubuntu 22.04, amd64',
    hasLeRobot: true,
  },
  'jetson-jp6': {
    baseImage: 'nvcr.io/nvidia/l4t-jetpack:r36.4.0',
    platform: 'linux/arm64',
    description: 'NVIDIA L4T r36.4 / JetPack 6 for Jetson Orin, arm64',
    hasLeRobot: true,
  },
  cpu: {
    baseImage: 'python:3.11-slim-bookworm',
    platform: 'linux/amd64',
    description: 'Python 3.11 slim (Debian bookworm), CPU only',
    hasLeRobot: false,
  },
}
