/*
 * Portkey's configs name provider fields its own way (`aws_region`, `azure_deployment_id`, …). A
 * config is read with those names turned into ours before validation, so the rest of the gateway
 * knows one spelling; the validation's answers turn them back, so an error names the field as the
 * client wrote it.
 */
import { isPlainObject } from '../core/plain-object';
import { formatPath, type Path } from './schema-rules';
import type { ConfigIssue } from './types';

/** Portkey's config field → ours. */
const portkeyFields: Readonly<Record<string, string>> = {
  aws_access_key_id: 'cloudA_access_key_id',
  aws_secret_access_key: 'cloudA_secret_access_key',
  aws_region: 'cloudA_region',
  aws_session_token: 'cloudA_session_token',
  vertex_project_id: 'cloudB_project_id',
  vertex_region: 'cloudB_region',
  vertex_service_account_json: 'cloudB_service_account_json',
  azure_resource_name: 'cloudC_resource_name',
  azure_deployment_id: 'cloudC_deployment_id',
  azure_api_version: 'cloudC_api_version',
  azure_model_name: 'cloudC_model_name',
  openai_organization: 'compat_organization',
  openai_project: 'compat_project',
  strict_open_ai_compliance: 'strict_api_compliance',
};

/** A config with our field names, and where each renamed field was written (our param → theirs). */
export interface CanonicalConfig {
  config: unknown;
  written: Map<string, { param: string; field: string; ours: string }>;
}

/**
 * Renames Portkey's fields in the config and every target under it. When both spellings of a field
 * are there, ours is kept and theirs dropped. The input is not changed; without a Portkey field the
 * same object comes back.
 */
export function canonicalConfigFields(input: unknown): CanonicalConfig {
  const written: CanonicalConfig['written'] = new Map();
  const config = renameIn(input, undefined, written);
  return { config, written };
}

/** Where a node sits, as a chain to the root: a path array per level would cost the square of the depth. */
interface At {
  parent: At | undefined;
  index: number;
}

function pathOf(at: At | undefined, field: string): Path {
  const path: PropertyKey[] = [field];
  for (let node = at; node; node = node.parent) path.unshift('targets', node.index);
  return path;
}

function renameIn(node: unknown, at: At | undefined, written: CanonicalConfig['written']): unknown {
  if (!isPlainObject(node)) return node;
  let renamed: Record<string, unknown> | undefined;
  for (const field in node) {
    const ours = portkeyFields[field];
    if (ours === undefined) continue;
    renamed ??= { ...node };
    delete renamed[field];
    if (node[ours] === undefined) {
      renamed[ours] = node[field];
      written.set(formatPath(pathOf(at, ours)), { param: formatPath(pathOf(at, field)), field, ours });
    }
  }
  const targets = node.targets;
  if (Array.isArray(targets)) {
    let changed = false;
    const inner = targets.map((target, index) => {
      const canonical = renameIn(target, { parent: at, index }, written);
      if (canonical !== target) changed = true;
      return canonical;
    });
    if (changed) (renamed ??= { ...node }).targets = inner;
  }
  return renamed ?? node;
}

/** An issue about a renamed field (or inside it), named as the client wrote it. */
export function asWritten(issue: ConfigIssue, written: CanonicalConfig['written']): ConfigIssue {
  if (written.size === 0) return issue;
  for (const [ours, theirs] of written) {
    if (issue.param !== ours && !issue.param.startsWith(`${ours}.`) && !issue.param.startsWith(`${ours}[`)) continue;
    return { param: theirs.param + issue.param.slice(ours.length), message: issue.message.replaceAll(theirs.ours, theirs.field) };
  }
  return issue;
}
