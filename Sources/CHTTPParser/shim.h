#pragma once
// Node's http_parser (Debian libhttp-parser-dev): the request parser swift-nio embedded for years.
#include <http_parser.h>
