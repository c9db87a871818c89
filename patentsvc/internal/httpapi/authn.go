package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/shared/httperr"
)

type credentialsRequest struct {
	Email    *string `json:"email"`
	Password *string `json:"password"`
}

// parse checks the credentials' shape: both present, a valid email in its
// normal form (auth.ParseEmail), a password without control characters
// and (for registration) of 8 to 72 bytes. Every broken field is reported
// in one 422.
func (r credentialsRequest) parse(checkPasswordLength bool) (email, password string, err error) {
	var fields []httperr.FieldError
	if r.Email == nil {
		fields = append(fields, httperr.FieldError{Field: "email", Message: "email is required"})
	} else if email, err = auth.ParseEmail(*r.Email); err != nil {
		fields = append(fields, httperr.FieldError{Field: "email", Message: err.Error()})
	}
	switch {
	case r.Password == nil:
		fields = append(fields, httperr.FieldError{Field: "password", Message: "password is required"})
	case checkPasswordLength:
		if perr := auth.CheckPassword(*r.Password); perr != nil {
			fields = append(fields, httperr.FieldError{Field: "password", Message: perr.Error()})
		}
	case *r.Password == "":
		fields = append(fields, httperr.FieldError{Field: "password", Message: "password is required"})
	default:
		if perr := auth.CheckPasswordCharacters(*r.Password); perr != nil {
			fields = append(fields, httperr.FieldError{Field: "password", Message: perr.Error()})
		}
	}
	if len(fields) > 0 {
		return "", "", httperr.New(http.StatusUnprocessableEntity, fields[0].Message).WithFields(fields...)
	}
	return email, *r.Password, nil
}

// handleRegister serves POST /auth/register: 201 with the user; the first
// user ever registered is admin.
func handleRegister(users Users) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req credentialsRequest
		if err := decodeJSON(c, &req); err != nil {
			return err
		}
		email, password, err := req.parse(true)
		if err != nil {
			return err
		}
		u, err := users.Register(c.Request().Context(), email, password)
		if err != nil {
			if isConflict(err) {
				return httperr.Wrap(err, http.StatusConflict, "Email already registered")
			}
			return err
		}
		return c.JSON(http.StatusCreated, fromUser(u))
	}
}

type tokensJSON struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
}

func fromTokens(t auth.Tokens) tokensJSON {
	return tokensJSON{AccessToken: t.Access, RefreshToken: t.Refresh, TokenType: "bearer", ExpiresIn: int64(t.ExpiresIn.Seconds())}
}

// handleLogin serves POST /auth/login.
func handleLogin(users Users) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req credentialsRequest
		if err := decodeJSON(c, &req); err != nil {
			return err
		}
		email, password, err := req.parse(false)
		if err != nil {
			return err
		}
		tokens, err := users.Login(c.Request().Context(), email, password)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, fromTokens(tokens))
	}
}

type refreshRequest struct {
	RefreshToken *string `json:"refresh_token"`
}

// handleRefresh serves POST /auth/refresh: a new token pair; the refresh
// token presented stops working.
func handleRefresh(users Users) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req refreshRequest
		if err := decodeJSON(c, &req); err != nil {
			return err
		}
		if req.RefreshToken == nil || *req.RefreshToken == "" {
			return httperr.New(http.StatusUnprocessableEntity, "refresh_token is required").
				WithFields(httperr.FieldError{Field: "refresh_token", Message: "refresh_token is required"})
		}
		tokens, err := users.Refresh(c.Request().Context(), *req.RefreshToken)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, fromTokens(tokens))
	}
}

// handleMe serves GET /auth/me: the caller's user record.
func handleMe() echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.JSON(http.StatusOK, fromUser(currentUser(c)))
	}
}
