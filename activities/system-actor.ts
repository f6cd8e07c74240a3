// Who changed what an activity changes, for the audit trail: the platform, named by the workflow running it.
import { Context } from '@temporalio/activity'
import { activityContext, type ActivityContext } from '../api/identity/context'

/** The context of the current activity, named by its workflow; every activity of ours runs in one. */
export function workflowActor(): ActivityContext {
  const execution = Context.current().info.workflowExecution
  if (!execution) throw new Error('an audited activity runs outside a workflow')
  return activityContext(execution.workflowId)
}
