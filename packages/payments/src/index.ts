export { createTestProvider, testProvider, type TestProviderOptions } from './test-provider.js'
