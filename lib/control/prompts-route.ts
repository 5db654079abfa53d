import { boolean, int, maxLength, minLength, object, optional, pipe, record, refine, string, transform, unknown } from 'zod/mini';
import { badRequest, GatewayError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import { answerFields, controlRoutes, defineRoute, knownFields } from '../http/define-route';
import { listEnvelope, pageQuery } from '../http/pagination';
import { readRenderInput, renderPrompt } from '../prompts/render';
import {
  addTemplateVersion,
  createTemplate,
  deleteTemplate,
  getTemplate,
  listTemplates,
  parseTemplateRef,
  partialNotFound,
  promptNotFound,
  publishTemplate,
  templateVersions,
  type PromptKind,
  type SavedTemplate,
} from '../prompts/saved-prompts';
import { checkPartialChains, loadIncludedPartials } from '../prompts/partial-includes';
import { checkPartialTemplate, parseTemplate, partialNamePattern, templatePartialNames } from '../prompts/template';
import type { TemplateHead, TemplateVersion } from '../store/prompts';

const notFoundOf = (kind: PromptKind) => (kind === 'PROMPT' ? promptNotFound : partialNotFound);

/**
 * A path reference (`id`, `slug`, `…@latest`, `…@3`); one that cannot name anything is a 404
 * without a lookup. Writes name the prompt itself: versions are immutable.
 */
function refParam(kind: PromptKind, name: 'promptId' | 'partialId', write?: string) {
  return pipe(
    object({ [name]: string() }),
    transform((params: Record<string, string>, context) => {
      const raw = params[name]!;
      const ref = parseTemplateRef(raw);
      if (!ref) throw notFoundOf(kind)(raw);
      if (write && ref.version !== 'published') {
        const message = `${write} takes the ${kind === 'PROMPT' ? 'prompt' : 'partial'} without a version (${ref.key}); versions are immutable.`;
        context.issues.push({ code: 'custom', message, input: raw, path: [name], params: { code: 'invalid_prompt_id' } });
      }
      return { raw, ref };
    }),
  );
}

const objectField = (field: string) => optional(unknown().check(refine((value) => value === undefined || isPlainObject(value), `${field} must be an object.`)));
const arrayField = (field: string) => optional(unknown().check(refine((value) => value === undefined || Array.isArray(value), `${field} must be an array.`)));
const text = (field: string, max: number) =>
  optional(string(`${field} must be a string.`).check(maxLength(max, `${field} must be at most ${max} characters.`)));
const invalidName = 'name must be a string of 1 to 255 characters.';
const maxTemplateBytes = 200 * 1024;

/** Version fields a prompt keeps; `patch` fills the ones left out from the latest version. */
const promptVersionFields = ['string', 'parameters', 'model', 'provider', 'virtual_key', 'tools', 'tool_choice', 'functions', 'template_metadata'] as const;

const promptBody = knownFields(
  {
    name: optional(string(invalidName).check(minLength(1, invalidName), maxLength(255, invalidName))),
    string: text('string', maxTemplateBytes),
    parameters: objectField('parameters'),
    model: text('model', 256),
    provider: text('provider', 256),
    virtual_key: text('virtual_key', 256),
    tools: arrayField('tools'),
    tool_choice: optional(unknown()),
    functions: arrayField('functions'),
    version_description: text('version_description', 2000),
    template_metadata: objectField('template_metadata'),
    metadata: objectField('metadata'),
    collection_id: text('collection_id', 256),
    patch: optional(boolean('patch must be true or false.')),
    ...answerFields(['object', 'id', 'slug', 'version', 'version_id', 'latest_version', 'published_version', 'created_at', 'updated_at', 'version_created_at']),
  },
  (field) =>
    `Unknown field "${field}"; a prompt takes name, string, parameters, model, provider (or virtual_key), tools, tool_choice, functions, version_description, template_metadata, collection_id, and on PUT patch.`,
);
type PromptBody = typeof promptBody._zod.output;

const partialBody = knownFields(
  {
    name: optional(
      string('name must be a string.').check(
        refine((name) => partialNamePattern.test(name), 'name must be 1 to 100 letters, digits, "_", "." or "-" (it is what templates write in {{>name}}).'),
      ),
    ),
    string: text('string', maxTemplateBytes),
    version_description: text('version_description', 2000),
    patch: optional(boolean('patch must be true or false.')),
    ...answerFields(['object', 'id', 'slug', 'version', 'version_id', 'latest_version', 'published_version', 'created_at', 'updated_at', 'version_created_at']),
  },
  (field) => `Unknown field "${field}"; a partial takes name, string and version_description (and patch on PUT).`,
);

const makeDefaultBody = knownFields(
  {
    version: int('version must be a version number (an integer from 1).').check(
      refine((version) => version >= 1, 'version must be a version number (an integer from 1).'),
    ),
  },
  (field) => `Unknown field "${field}"; makeDefault takes {"version": <n>}.`,
);

/** The version fields of a prompt body, checked: a template that does not render is refused when saved. */
function promptFields(body: PromptBody, latest?: SavedTemplate): Record<string, unknown> {
  const given: Record<string, unknown> = {};
  for (const field of promptVersionFields) if (body[field] !== undefined) given[field] = body[field];
  if (body.metadata !== undefined && body.template_metadata === undefined) given.template_metadata = body.metadata;
  const fields = latest ? { ...pick(latest.fields, promptVersionFields), ...given } : given;
  if (body.version_description !== undefined) fields.version_description = body.version_description;
  if (typeof fields.string !== 'string') {
    throw badRequest(
      latest
        ? 'string is required unless "patch" is true: the template of the new version.'
        : 'string is required: the template, a JSON list of chat messages or plain text.',
      'string',
      'invalid_prompt_body',
    );
  }
  parseTemplate(fields.string);
  if (isPlainObject(fields.parameters)) {
    for (const owned of ['messages', 'prompt']) {
      if (Object.hasOwn(fields.parameters, owned))
        throw badRequest(`parameters.${owned} is not a hyperparameter: the template makes it.`, `parameters.${owned}`, 'invalid_prompt_body');
    }
  }
  if (fields.provider !== undefined && fields.virtual_key !== undefined) {
    throw badRequest('Send provider (a catalog @slug) or virtual_key, not both.', 'virtual_key', 'invalid_prompt_body');
  }
  if (Buffer.byteLength(JSON.stringify(fields)) > maxTemplateBytes) {
    throw badRequest(`The prompt is larger than ${maxTemplateBytes / 1024} KB of JSON; move large parts into partials.`, 'string', 'prompt_too_large');
  }
  return fields;
}

function partialFields(body: typeof partialBody._zod.output, latest?: SavedTemplate): Record<string, unknown> {
  if (latest && body.name !== undefined && body.name !== latest.name) {
    throw badRequest(
      `A partial keeps its name (${latest.name}): templates include it by that name. Create a new partial for a new name.`,
      'name',
      'invalid_partial_body',
    );
  }
  const fields: Record<string, unknown> = {};
  const source = body.string ?? (body.patch && latest ? latest.fields.string : undefined);
  if (typeof source !== 'string')
    throw badRequest(
      latest ? 'string is required unless "patch" is true.' : "string is required: the partial's template text.",
      'string',
      'invalid_partial_body',
    );
  checkPartialTemplate(source);
  fields.string = source;
  if (body.version_description !== undefined) fields.version_description = body.version_description;
  return fields;
}

/**
 * Refuses a template whose partials would loop or nest too deep once it is in use: the partials it
 * reaches are read as published, with `partial` (a partial being saved or published) as given.
 * Partials that do not exist yet are allowed; rendering names them.
 */
async function checkIncludes(workspaceId: string, roots: readonly string[], partial?: { name: string; text: string }, param = 'string'): Promise<void> {
  const given = partial ? { [partial.name]: partial.text } : undefined;
  const included = await loadIncludedPartials(workspaceId, roots, { fresh: true, given, param });
  checkPartialChains(roots, included, param);
}

const checkPromptIncludes = (workspaceId: string, template: string) => checkIncludes(workspaceId, templatePartialNames(parseTemplate(template)));
const checkPartialIncludes = (workspaceId: string, name: string, text: string, param?: string) => checkIncludes(workspaceId, [name], { name, text }, param);

function pick(source: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((field) => source[field] !== undefined).map((field) => [field, source[field]]));
}

const objectName = (kind: PromptKind) => (kind === 'PROMPT' ? 'prompt' : 'partial');

function present(kind: PromptKind, saved: SavedTemplate) {
  return {
    object: objectName(kind),
    id: saved.id,
    slug: saved.slug,
    name: saved.name,
    ...(saved.collection_id !== undefined ? { collection_id: saved.collection_id } : {}),
    version: saved.version,
    version_id: `${saved.id}@${saved.version}`,
    latest_version: saved.latest_version,
    published_version: saved.published_version,
    ...saved.fields,
    created_at: saved.created_at,
    updated_at: saved.updated_at,
    version_created_at: saved.version_created_at,
  };
}

function presentHead(kind: PromptKind, head: TemplateHead) {
  return {
    object: objectName(kind),
    id: head.id,
    slug: head.slug,
    name: head.name,
    ...(head.collection_id !== undefined ? { collection_id: head.collection_id } : {}),
    latest_version: Number(head.latest_version),
    published_version: Number(head.published_version),
    created_at: Number(head.created_at),
    updated_at: Number(head.updated_at),
  };
}

function presentVersion(kind: PromptKind, head: TemplateHead, version: TemplateVersion) {
  return {
    object: `${objectName(kind)}_version`,
    id: head.id,
    version: Number(version.version),
    version_id: `${head.id}@${version.version}`,
    published: Number(version.version) === Number(head.published_version),
    ...(version.fields?.version_description !== undefined ? { version_description: version.fields.version_description } : {}),
    created_at: Number(version.created_at),
  };
}

/** The routes every versioned resource has, for prompts under `/v1/prompts`, for partials under `/v1/prompts/partials`. */
function versionedRoutes(kind: PromptKind, base: string, param: 'promptId' | 'partialId') {
  const item = `${base}/{${param}}`;
  const notFound = notFoundOf(kind);
  const label = objectName(kind);
  return [
    defineRoute({
      method: 'GET',
      path: base,
      role: 'member',
      query: pageQuery(),
      async handler({ query }, { auth }) {
        const page = await listTemplates(kind, auth.workspaceId, query);
        return { ...listEnvelope(page, (head) => presentHead(kind, head)), total: page.total };
      },
    }),
    defineRoute({
      method: 'GET',
      path: item,
      role: 'member',
      params: refParam(kind, param),
      async handler({ params: { raw, ref } }, { auth }) {
        const found = await getTemplate(kind, auth.workspaceId, ref);
        if (!found) throw notFound(raw);
        return present(kind, found);
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: item,
      role: 'admin',
      params: refParam(kind, param, 'DELETE'),
      async handler({ params: { raw, ref } }, { auth }) {
        const deleted = await deleteTemplate(kind, auth.workspaceId, ref.key);
        if (!deleted) throw notFound(raw);
        return { id: deleted.id, object: label, deleted: true };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${item}/versions`,
      role: 'member',
      params: refParam(kind, param, 'GET …/versions'),
      async handler({ params: { raw, ref } }, { auth }) {
        const found = await templateVersions(kind, auth.workspaceId, ref.key);
        if (!found) throw notFound(raw);
        const data = found.versions.map((version) => presentVersion(kind, found.head, version));
        return { object: 'list', data, total: data.length };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${item}/makeDefault`,
      role: 'admin',
      params: refParam(kind, param, 'PUT …/makeDefault'),
      body: makeDefaultBody,
      invalidCode: `invalid_${label}_body`,
      async handler({ params: { raw, ref }, body }, { auth }) {
        if (kind === 'PARTIAL') {
          // Publishing is what puts a version in use, so a version that would loop is refused here too.
          const version = await getTemplate(kind, auth.workspaceId, { key: ref.key, version: body.version });
          if (version && typeof version.fields.string === 'string')
            await checkPartialIncludes(auth.workspaceId, version.name, version.fields.string, 'version');
        }
        const published = await publishTemplate(kind, auth.workspaceId, ref.key, body.version);
        if (published === 'not_found') throw notFound(raw);
        if (published === 'no_version')
          throw new GatewayError(404, `${raw.slice(0, 120)} has no version ${body.version}; see GET ${base}/${ref.key}/versions.`, {
            code: `${label}_version_not_found`,
            param: 'version',
          });
        return present(kind, published);
      },
    }),
  ];
}

const created = (kind: PromptKind, saved: SavedTemplate) => ({
  id: saved.id,
  slug: saved.slug,
  version_id: `${saved.id}@${saved.version}`,
  version: saved.version,
  object: objectName(kind),
});

/**
 * `/v1/prompts` and `/v1/prompts/partials`: prompt templates and the partials they include, per
 * workspace. Admins write; members list, read and render (running is `POST
 * /v1/prompts/{promptId}/completions`, an inference route of its own).
 *
 * - `POST /v1/prompts` stores version 1 (published) → `{id, slug, version_id, object}`.
 * - `PUT /v1/prompts/{id}` stores a new version; with `"patch": true` the fields left out come
 *   from the latest version. `PUT /v1/prompts/{id}/makeDefault {"version": n}` publishes n.
 * - `GET /v1/prompts/{id}` answers the published version (`@latest`, `@<n>` select others).
 * - `POST /v1/prompts/{id}/render {variables, …hyperparameters}` → `{success, data}`.
 * - Partials have the same routes under `/v1/prompts/partials`, named by their `name`.
 */
export const promptsRoute = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/prompts',
    role: 'admin',
    body: promptBody,
    invalidCode: 'invalid_prompt_body',
    async handler({ body }, { auth }) {
      if (body.name === undefined) throw badRequest('name is required: a name people will recognise the prompt by.', 'name', 'invalid_prompt_body');
      if (body.patch !== undefined) throw badRequest('patch applies to PUT /v1/prompts/{promptId} only.', 'patch', 'invalid_prompt_body');
      const fields = promptFields(body);
      await checkPromptIncludes(auth.workspaceId, fields.string as string);
      return created('PROMPT', await createTemplate('PROMPT', auth.workspaceId, { name: body.name, collection_id: body.collection_id, fields }));
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/prompts/{promptId}',
    role: 'admin',
    params: refParam('PROMPT', 'promptId', 'PUT'),
    body: promptBody,
    invalidCode: 'invalid_prompt_body',
    async handler({ params: { raw, ref }, body }, { auth }) {
      // With patch and no string, the template is the latest version's, checked when it was saved.
      if (typeof body.string === 'string') await checkPromptIncludes(auth.workspaceId, body.string);
      const saved = await addTemplateVersion('PROMPT', auth.workspaceId, ref.key, (latest) => promptFields(body, body.patch ? latest : undefined));
      if (!saved) throw promptNotFound(raw);
      return present('PROMPT', saved);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/prompts/{promptId}/render',
    role: 'member',
    params: refParam('PROMPT', 'promptId'),
    body: record(string(), unknown()),
    emptyBodyAllowed: true,
    invalidCode: 'invalid_prompt_body',
    async handler({ params: { raw, ref }, body }, { auth }) {
      const input = readRenderInput(body);
      const prompt = await getTemplate('PROMPT', auth.workspaceId, ref);
      if (!prompt) throw promptNotFound(raw);
      return { success: true, data: await renderPrompt(auth.workspaceId, prompt, input, { fresh: true }) };
    },
  }),
  ...versionedRoutes('PROMPT', '/v1/prompts', 'promptId'),
  defineRoute({
    method: 'POST',
    path: '/v1/prompts/partials',
    role: 'admin',
    body: partialBody,
    invalidCode: 'invalid_partial_body',
    async handler({ body }, { auth }) {
      if (body.name === undefined)
        throw badRequest('name is required: the name templates include the partial by, as {{>name}}.', 'name', 'invalid_partial_body');
      if (body.patch !== undefined) throw badRequest('patch applies to PUT /v1/prompts/partials/{partialId} only.', 'patch', 'invalid_partial_body');
      const fields = partialFields(body);
      await checkPartialIncludes(auth.workspaceId, body.name, fields.string as string);
      return created('PARTIAL', await createTemplate('PARTIAL', auth.workspaceId, { name: body.name, fields }));
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/prompts/partials/{partialId}',
    role: 'admin',
    params: refParam('PARTIAL', 'partialId', 'PUT'),
    body: partialBody,
    invalidCode: 'invalid_partial_body',
    async handler({ params: { raw, ref }, body }, { auth }) {
      if (typeof body.string === 'string') {
        // The path may be the partial's id: its name is what templates include.
        const latest = await getTemplate('PARTIAL', auth.workspaceId, { key: ref.key, version: 'latest' });
        if (!latest) throw partialNotFound(raw);
        checkPartialTemplate(body.string);
        await checkPartialIncludes(auth.workspaceId, latest.name, body.string);
      }
      const saved = await addTemplateVersion('PARTIAL', auth.workspaceId, ref.key, (latest) => partialFields(body, latest));
      if (!saved) throw partialNotFound(raw);
      return present('PARTIAL', saved);
    },
  }),
  ...versionedRoutes('PARTIAL', '/v1/prompts/partials', 'partialId'),
);
