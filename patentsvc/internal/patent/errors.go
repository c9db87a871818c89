package patent

import (
	"errors"
	"fmt"
)

// Sentinel errors, wrapped with context by the packages that return them
// and mapped to HTTP statuses once, in httpapi.
var (
	// ErrNotFound: the thing asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the thing to create exists already.
	ErrConflict = errors.New("already exists")
	// ErrInvalid: input breaks a rule (the error says which).
	ErrInvalid = errors.New("invalid")
	// ErrLastAdmin: the change would leave no admin.
	ErrLastAdmin = errors.New("the last admin cannot be removed or demoted")
	// ErrSelfDelete: an admin tried to delete their own account.
	ErrSelfDelete = errors.New("admins cannot delete their own account")
	// ErrTokenReplayed: a refresh token was presented a second time.
	ErrTokenReplayed = errors.New("refresh token already used")
)

// Invalidf returns an error that wraps ErrInvalid and reads as the message
// alone, fit to show a client ("password must be 8 to 72 bytes").
func Invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }
