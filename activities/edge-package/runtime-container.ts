// The Dockerfile (FROM the manifest's base image, its target's image line) and compose.yaml that run the package's
// processes on the robot.
import { imageLines } from '../../api/edge-packages/image-lines'
import type { PackageManifest } from '../../api/edge-packages/manifest'
import { LEROBOT_VERSION, OPENPI_COMMIT, type RuntimePlan } from './runtime-plan'

/** The hash-pinned requirements file the image installs (null: only LeRobot, pinned by version). */
export function requirementsFile(plan: RuntimePlan): string | null {
  if (plan.server === 'onnx') return 'requirements/onnx-server.txt'
  return plan.clients.includes('openpi-ws') ? 'requirements/robot-client.txt' : null
}

export function dockerfile(m: PackageManifest, plan: RuntimePlan): string {
  const line = imageLines[m.targetArch]
  const requirements = requirementsFile(plan)
  const lines = [
    '# syntax=docker/dockerfile:1',
    `# This edge package for ${m.targetArch}: ${line.description} (${m.platform}). Its id is in manifest.json.`,
    `FROM ${m.baseImage}`,
    'ENV DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1',
  ]
  // The CUDA and L4T lines are plain Ubuntu 22.04 images: their Python 3.10 comes from apt.
  if (!m.baseImage.startsWith('python:'))
    lines.push('RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv python3-pip \\\n    && rm -rf /var/lib/apt/lists/*')
  lines.push('WORKDIR /package', 'COPY requirements/ requirements/', 'RUN python3 -m venv /opt/venv')
  if (requirements) lines.push(`RUN /opt/venv/bin/pip install --no-cache-dir --require-hashes --no-deps -r ${requirements}`)
  if (plan.clients.includes('lerobot-grpc'))
    lines.push(
      `# LeRobot ${LEROBOT_VERSION} with its async (gRPC) extra, pinned by version (its torch tree is not hash-pinned).`,
      ...(m.targetArch === 'jetson-jp6' ? ["# PyPI's aarch64 torch is CPU-only: for GPU inference install NVIDIA's JetPack 6 torch wheel first."] : []),
      `RUN /opt/venv/bin/pip install --no-cache-dir "lerobot[async]==${LEROBOT_VERSION}"`,
    )
  lines.push('COPY . .', 'ENV RCP_PYTHON=/opt/venv/bin/python PATH=/opt/venv/bin:$PATH', 'ENTRYPOINT ["./launch.sh"]')
  return `${lines.join('\n')}\n`
}

const gpu = (m: PackageManifest): string[] =>
  m.targetArch === 'x86-cuda'
    ? ['    deploy:', '      resources:', '        reservations:', '          devices:', '            - { driver: nvidia, count: all, capabilities: [gpu] }']
    : m.targetArch === 'jetson-jp6'
      ? ['    runtime: nvidia']
      : []

function openpiServer(m: PackageManifest, plan: RuntimePlan): string[] {
  const config = m.strategyKey ? `\${OPENPI_CONFIG:-${m.strategyKey}}` : '${OPENPI_CONFIG:?set OPENPI_CONFIG to the checkpoint training config}'
  const port = plan.ports['openpi-ws']
  const args = `--port ${port} policy:checkpoint --policy.config=${config} --policy.dir=/package/model`
  return [
    `  # openpi's own serving image and command (scripts/docker/serve_policy.Dockerfile, scripts/serve_policy.py) from a`,
    `  # checkout of github.com/Physical-Intelligence/openpi at ${OPENPI_COMMIT}, as openpi's compose runs them.`,
    '  policy-server:',
    '    build:',
    '      context: ${OPENPI_DIR:-./openpi}',
    '      dockerfile: scripts/docker/serve_policy.Dockerfile',
    '    init: true',
    // serve_policy.py binds 0.0.0.0 inside its container, unauthenticated: published on the robot's loopback only,
    // where the robot client (host networking) reaches it.
    '    ports:',
    `      - "127.0.0.1:${port}:${port}"`,
    '    volumes:',
    '      - ${OPENPI_DIR:-./openpi}:/app',
    '      - ./model:/package/model:ro',
    '      - ${OPENPI_DATA_HOME:-~/.cache/openpi}:/openpi_assets',
    '    environment:',
    '      OPENPI_DATA_HOME: /openpi_assets',
    '      IS_DOCKER: "true"',
    `      SERVER_ARGS: ${JSON.stringify(args)}`,
    ...gpu(m),
  ]
}

/** The openpi robot client's launch settings (robot_client.py), passed from the shell into its container. */
const OPENPI_CLIENT_SETTINGS = [
  'RCP_MAX_HZ',
  'RCP_CHUNK_THRESHOLD',
  'RCP_AGGREGATION',
  'RCP_CONNECT_TIMEOUT_S',
  'RCP_OPEN_TIMEOUT_S',
  'RCP_PING_INTERVAL_S',
  'RCP_PING_TIMEOUT_S',
]

export function composeFile(m: PackageManifest, plan: RuntimePlan): string {
  const env = ['      RCP_TOKEN: ${RCP_TOKEN:-}', '      RCP_API_BASE: ${RCP_API_BASE:-}']
  if (plan.clients.includes('openpi-ws')) env.push(...OPENPI_CLIENT_SETTINGS.map((name) => `      ${name}: \${${name}:-}`))
  if (plan.clients.includes('lerobot-grpc'))
    env.push('      LEROBOT_ROBOT_ARGS: ${LEROBOT_ROBOT_ARGS:-}', '      LEROBOT_SERVER_ADDRESS: ${LEROBOT_SERVER_ADDRESS:-}')
  const lines = [
    '# This edge package: `docker compose up --build`. RCP_TOKEN and RCP_API_BASE come from your shell.',
    'services:',
    '  robot:',
    '    build: .',
    `    platform: ${m.platform}`,
    '    init: true',
    '    # Host networking: the client reaches a local policy server on 127.0.0.1 and the robot on its own network.',
    '    network_mode: host',
    '    environment:',
    ...env,
    ...gpu(m),
    m.useFakeTransport
      ? '    # Fake transport: no hardware is touched.'
      : '    # Real transport: list your robot\'s devices here, e.g. devices: ["/dev/ttyACM0:/dev/ttyACM0"]',
  ]
  if (plan.server === 'openpi') lines.push(...openpiServer(m, plan))
  return `${lines.join('\n')}\n`
}
