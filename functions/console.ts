import { consoleRoute } from '../lib/control/console-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** GET /console and GET /console/{file}: the console's page and assets, public */
export const handler = bufferedHandler(consoleRoute);
