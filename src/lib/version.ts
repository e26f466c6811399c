// The release of every executable and of the API's /_status, in one place.
export const VERSION = '0.1.0';
