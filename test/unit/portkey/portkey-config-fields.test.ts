import { describe, expect, it } from 'vitest';
import { parseConfig as parseConfigWith } from '../../../lib/config/schema';
import { checkIssues } from '../../../lib/guardrails/validate-checks';

const parseConfig = (input: unknown) => parseConfigWith(input, checkIssues);

describe("a config in Portkey's field names", () => {
  it('is read as the canonical fields, at the top and in every target', () => {
    const result = parseConfig({
      strategy: { mode: 'fallback' },
      strict_open_ai_compliance: false,
      targets: [
        { provider: 'bedrock', aws_access_key_id: 'AKIA0', aws_secret_access_key: 'secret', aws_region: 'us-east-1', aws_session_token: 'token' },
        { provider: 'vertex-ai', vertex_project_id: 'project', vertex_region: 'europe-west4', vertex_service_account_json: { project_id: 'project' } },
        { provider: 'azure-ai', azure_resource_name: 'res', azure_deployment_id: 'dep', azure_api_version: '2024-10-21', azure_model_name: 'gpt-4o' },
        { provider: 'openai', api_key: 'sk-1', openai_organization: 'org-1', openai_project: 'proj-1' },
      ],
    });
    expect(result.ok && result.config).toEqual({
      strategy: { mode: 'fallback' },
      strict_api_compliance: false,
      targets: [
        { provider: 'bedrock', cloudA_access_key_id: 'AKIA0', cloudA_secret_access_key: 'secret', cloudA_region: 'us-east-1', cloudA_session_token: 'token' },
        { provider: 'vertex-ai', cloudB_project_id: 'project', cloudB_region: 'europe-west4', cloudB_service_account_json: { project_id: 'project' } },
        { provider: 'azure-ai', cloudC_resource_name: 'res', cloudC_deployment_id: 'dep', cloudC_api_version: '2024-10-21', cloudC_model_name: 'gpt-4o' },
        { provider: 'openai', api_key: 'sk-1', compat_organization: 'org-1', compat_project: 'proj-1' },
      ],
    });
  });

  it('keeps the canonical spelling when both are sent', () => {
    const result = parseConfig({ provider: 'bedrock', aws_region: 'eu-west-1', cloudA_region: 'us-west-2', api_key: 'x' });
    expect(result.ok && result.config).toEqual({ provider: 'bedrock', cloudA_region: 'us-west-2', api_key: 'x' });
  });

  it('names a refused field as the client wrote it, in the param and the message', () => {
    const result = parseConfig({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai' }, { provider: 'bedrock', aws_region: 42 }] });
    expect(result.ok).toBe(false);
    const issues = result.ok ? [] : result.issues;
    expect(issues).toEqual([{ param: 'config.targets[1].aws_region', message: 'must be a string; got 42' }]);
  });

  it('names a field inside a renamed object by the written name too', () => {
    const result = parseConfig({ provider: 'vertex-ai', vertex_service_account_json: 'not an object' });
    expect(result.ok ? [] : result.issues.map((issue) => issue.param)).toContain('config.vertex_service_account_json');
  });

  it('leaves a config without Portkey fields as it is', () => {
    const config = { provider: 'openai', api_key: 'sk-1', strict_api_compliance: true };
    const result = parseConfig(config);
    expect(result.ok && result.config).toEqual(config);
  });
});
