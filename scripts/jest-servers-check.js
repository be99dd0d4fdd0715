// Integration and e2e tests talk to real Redis and NATS. The test command
// (scripts/test.mjs) finds or starts them and exports REDIS_URL and NATS_URL; when jest
// is run by hand without them, fail loudly instead of skipping.
module.exports = async function check() {
  const missing = ['REDIS_URL', 'NATS_URL'].filter((k) => !process.env[k]);
  if (missing.length > 0) {
    throw new Error(
      `integration/e2e tests need real servers: ${missing.join(', ')} not set. ` +
        'Run them through `npm test` (scripts/test.mjs), which finds or starts redis-server and nats-server.',
    );
  }
};
