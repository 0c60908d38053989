export * from './accounts.js'
export * from './catalog.js'
export * from './events.js'
