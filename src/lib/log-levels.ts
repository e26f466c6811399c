// The logger's levels and line formats, named as the settings files write them (`log_level :info`).
export const logLevels = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof logLevels)[number];

export const logFormats = ['text', 'json'] as const;
export type LogFormat = (typeof logFormats)[number];
