/**
 * Imported first by every local entry point and the test harness. On Node 20 the AWS SDK prints a
 * seven-line notice, once per process, that its releases after January 2027 will need Node 22. The
 * local runtime still supports Node 20.19+ and the README already recommends 22 or 24, so here the
 * notice only buries the output that matters at every start and throughout the tests. This sets the
 * SDK's documented opt-out before any client reads it, keeping a value the environment already has;
 * processes started from these inherit it. Lambda runs Node 22, where the SDK prints nothing.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export {};
