/**
 * `npm run openapi`: writes docs/openapi.json from the route definitions. GET /v1/openapi.json
 * serves that file, and a unit test fails while it differs from what this writes.
 */
import { writeFileSync } from 'node:fs';
import { openApiText } from '../lib/openapi/document-text';

writeFileSync(new URL('../docs/openapi.json', import.meta.url), openApiText());
