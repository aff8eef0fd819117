package users

import (
	"time"

	"quarry/internal/model"
)

// sessionCacheFor is how long a session read from the database answers
// from memory (gencache): every page of a signed-in browser reads its
// session, and this spares the statement while the session stays the
// same. Within
// this process a session signed out, and any user written (blocked,
// deactivated, deleted, updated), is forgotten at once (the generation
// moves), and an expired one is refused by its end time; what another
// process changes in a shared database (PostgreSQL) is seen at the
// latest sessionCacheFor later.
const sessionCacheFor = time.Second

// maxCachedSessions bounds the remembered sessions; past it they start
// afresh.
const maxCachedSessions = 10000

// cachedSession is a session as the database gave it, with its user.
type cachedSession struct {
	ws   model.WebSession
	user model.User
}
