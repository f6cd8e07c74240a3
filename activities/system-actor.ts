// Who changed what an activity changes, for the audit trail: the platform, named by the workflow running it.
import { Context } from '@temporalio/activity'
import { systemContext, type SystemContext } from '../api/identity/context'

/** The system context of the current activity's workflow; every activity of ours runs in one. */
export function workflowActor(): SystemContext {
  const execution = Context.current().info.workflowExecution
  if (!execution) throw new Error('an audited activity runs outside a workflow')
  return systemContext(execution.workflowId)
}
