import type { FineTuningJobItem } from '../store/fine-tuning-jobs';

/** The spec's (OpenAI's) fine-tuning job object; every file and job id in it is the gateway's. */
export function presentJob(item: FineTuningJobItem) {
  return {
    id: item.id,
    object: 'fine_tuning.job' as const,
    model: item.model,
    status: item.status,
    fine_tuned_model: item.fine_tuned_model,
    created_at: item.created_at,
    finished_at: item.finished_at,
    trained_tokens: item.trained_tokens,
    training_file: item.training_file,
    validation_file: item.validation_file,
    result_files: item.result_files,
    hyperparameters: { n_epochs: 'auto', ...item.hyperparameters },
    method: item.method,
    organization_id: item.organisation_id,
    seed: item.seed,
    integrations: item.integrations,
    estimated_finish: item.estimated_finish,
    error: item.error,
    suffix: item.suffix,
    metadata: item.metadata,
  };
}
