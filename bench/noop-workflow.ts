// The baseline workflow of bench/webhooks.ts: it does nothing, so starting it and seeing it complete measures what
// the Temporal server and one worker can turn over, the ceiling a delivery workflow is read against.
export async function noopWorkflow(): Promise<void> {}
