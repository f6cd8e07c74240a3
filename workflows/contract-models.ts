// The models part of the Temporal contract (see contract.ts for the rules): the validation of a model version's
// objects. Types and constants only.
export const ModelsWorkflowType = {
  validateModelVersion: 'validateModelVersionWorkflow',
} as const

/** One validation per version at a time; a failed version validated again reuses the id. */
export const modelsWorkflowIds = {
  validation: (tenantId: string, modelVersionId: string) => `model-version-validation/${tenantId}/${modelVersionId}`,
} as const

export const ModelsErrorType = {
  /** The version row is gone (tenant deleted) or no longer validating: nothing left to check. */
  versionNotValidating: 'ModelVersionNotValidating',
} as const

export interface ValidateModelVersionInput {
  tenantId: string
  modelVersionId: string
}

export interface MeasuredObject {
  key: string
  sizeBytes: number
  sha256: string
}

/** What the object check found: every object as measured, or the first that does not match, named in `reason`. */
/** `cpuMs`: the worker's CPU time while measuring, every attempt's (metered as model_validation.cpu). */
export type ValidationOutcome = ({ status: 'ready'; objects: MeasuredObject[] } | { status: 'failed'; reason: string }) & { cpuMs?: number }

/** Heartbeat details: the objects measured so far, so a retried attempt does not hash them again. */
export interface ValidationCheckpoint {
  measured: MeasuredObject[]
  /** CPU milliseconds the earlier attempts used. */
  cpuMs?: number
}
