// Package sessionquery implements the FilterExpression and SortExpression languages of
// GameLift's SearchGameSessions: it parses them into small compiled trees that match and order
// Session values without allocating.
//
// The package is pure: it knows nothing of stores, fleets or the wire. The SearchGameSessions
// handler in package gamelift converts each ACTIVE game session into a Session, calls
// ParseFilter and ParseSort once per request, and wraps any *Error as an
// InvalidRequestException. Any package may import it.
//
// # Filter grammar
//
// As documented in the SearchGameSessions API reference, under FilterExpression,
// SortExpression and the gameSessionProperties attribute
// (https://docs.aws.amazon.com/gamelift/latest/apireference/API_SearchGameSessions.html), which
// the AWS SDK references repeat word for word:
//
//	filter     = or
//	or         = and { "OR" and }
//	and        = not { "AND" not }
//	not        = "NOT" not | "(" or ")" | condition
//	condition  = operand comparator value
//	operand    = "gameSessionName" | "gameSessionId" | "gameSessionProperties." key
//	           | "maximumSessions" | "creationTimeMillis" | "playerSessionCount"
//	           | "hasAvailablePlayerSessions"
//	comparator = "=" | "<>" | "<" | ">" | "<=" | ">="
//	value      = string | integer | "true" | "false"
//
// Precedence, highest first, is the documented one: comparators, parentheses, NOT, AND, OR;
// AND and OR group from left to right. Game property values are always compared as strings.
// String and boolean operands allow only = and <>; numeric operands allow all six comparators.
// A value is a literal of the operand's type: a string operand (game properties included) needs
// a quoted string, and an operand is never compared with another operand.
//
// Lexical rules. Documented: string values are case-sensitive and quoted, special characters
// escaped with a backslash (the reference's example is 'Matt\'s Awesome Game 1'); the
// reference's text asks for single quotes while its gameSessionProperties examples use double
// quotes, so both are accepted. Hoist's choices where the documentation is silent: a backslash
// makes the next character literal (\' \" \\; \n is just n), and doubling a quote is not
// an escape (write 'O\'Brien'); keywords (AND, OR, NOT, ASC, DESC, true, false) are
// case-insensitive while operand names are case-sensitive; integers are decimal with an
// optional minus sign and must fit in 64 bits; a property key runs to the next space,
// parenthesis, quote or comparator character; whitespace is optional around comparators and
// parentheses. An expression is 1 to 1024 characters long (the API model's
// NonZeroAndMaxString), counted in Unicode characters, and must be valid UTF-8.
//
// GameLift's search index drops game property keys that contain a period (API reference,
// GameProperty); Hoist has no such index, so such a key is looked up like any other.
//
// Undocumented semantics, chosen here: a session with no name, or without the game property a
// condition names, does not match = and does match <>, so that "x <> v" always equals
// "NOT x = v".
//
// # Errors
//
// ParseFilter and ParseSort report a malformed expression as an *Error naming what is wrong
// and its 1-based character position, for example "FilterExpression: expected a comparator
// (= <> < > <= >=) after 'playerSessionCount' at position 19".
//
// # Sort grammar
//
//	sort  = operand ( "ASC" | "DESC" )
//
// Sessions whose value for the operand is null (no name, or no such game property) sort
// last in both directions, as documented. Booleans sort false before true; strings sort by
// bytes.
package sessionquery
