/**
 * Vertex AI's supervised tuning API as JSON
 * (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.tuningJobs):
 * the fields the gateway writes or reads. Google's JSON writes int64 values as
 * strings ("epochCount": "3") and times as RFC 3339.
 */

/** POST …/tuningJobs: what a create sends. */
export interface CreateTuningJob {
  baseModel: string;
  supervisedTuningSpec: {
    trainingDatasetUri: string;
    validationDatasetUri?: string;
    hyperParameters?: { epochCount?: number; learningRateMultiplier?: number };
  };
  tunedModelDisplayName?: string;
  labels?: Record<string, string>;
}

export interface TuningJob {
  /** projects/{project}/locations/{location}/tuningJobs/{tuningJob} */
  name?: string;
  tunedModelDisplayName?: string;
  baseModel?: string;
  supervisedTuningSpec?: {
    trainingDatasetUri?: string;
    validationDatasetUri?: string;
    hyperParameters?: { epochCount?: string | number; learningRateMultiplier?: number; adapterSize?: string };
  };
  /** JOB_STATE_* */
  state?: string;
  createTime?: string;
  startTime?: string;
  endTime?: string;
  updateTime?: string;
  /** google.rpc.Status: set when the job failed or was cancelled. */
  error?: { code?: number; message?: string };
  labels?: Record<string, string>;
  tunedModel?: {
    /** projects/{project}/locations/{location}/models/{model}@{version} */
    model?: string;
    /** projects/{project}/locations/{location}/endpoints/{endpoint}: where the tuned model is served. */
    endpoint?: string;
    /** Only for jobs that keep intermediate checkpoints. */
    checkpoints?: TunedModelCheckpoint[];
  };
  tuningDataStats?: { supervisedTuningDataStats?: { totalBillableTokenCount?: string | number; tuningStepCount?: string | number } };
}

export interface TunedModelCheckpoint {
  checkpointId?: string;
  epoch?: string | number;
  step?: string | number;
  endpoint?: string;
}

export interface ListTuningJobsResponse {
  tuningJobs?: TuningJob[];
  nextPageToken?: string;
}
