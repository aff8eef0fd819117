package projects

import (
	"context"
	"strings"

	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// License is a license found in a repository.
type License struct {
	Key, Name, Nickname, HTMLURL, SourceURL string
	Path                                    string
}

// licenseFiles are where licenses are looked for, in order.
var licenseFiles = []string{"LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "COPYING", "COPYING.md"}

// knownLicenses are recognised by phrases of their text.
var knownLicenses = []struct {
	phrases []string
	lic     License
}{
	{[]string{"apache license", "version 2.0"}, License{Key: "apache-2.0", Name: "Apache License 2.0", HTMLURL: "http://choosealicense.com/licenses/apache-2.0/", SourceURL: "http://www.apache.org/licenses/LICENSE-2.0.html"}},
	{[]string{"gnu affero general public license", "version 3"}, License{Key: "agpl-3.0", Name: "GNU Affero General Public License v3.0", Nickname: "GNU AGPLv3", HTMLURL: "http://choosealicense.com/licenses/agpl-3.0/", SourceURL: "http://www.gnu.org/licenses/agpl-3.0.txt"}},
	{[]string{"gnu lesser general public license", "version 3"}, License{Key: "lgpl-3.0", Name: "GNU Lesser General Public License v3.0", Nickname: "GNU LGPLv3", HTMLURL: "http://choosealicense.com/licenses/lgpl-3.0/", SourceURL: "http://www.gnu.org/licenses/lgpl-3.0.txt"}},
	{[]string{"gnu general public license", "version 3"}, License{Key: "gpl-3.0", Name: "GNU General Public License v3.0", Nickname: "GNU GPLv3", HTMLURL: "http://choosealicense.com/licenses/gpl-3.0/", SourceURL: "http://www.gnu.org/licenses/gpl-3.0.txt"}},
	{[]string{"gnu general public license", "version 2"}, License{Key: "gpl-2.0", Name: "GNU General Public License v2.0", Nickname: "GNU GPLv2", HTMLURL: "http://choosealicense.com/licenses/gpl-2.0/", SourceURL: "http://www.gnu.org/licenses/gpl-2.0.txt"}},
	{[]string{"mozilla public license", "2.0"}, License{Key: "mpl-2.0", Name: "Mozilla Public License 2.0", HTMLURL: "http://choosealicense.com/licenses/mpl-2.0/", SourceURL: "https://www.mozilla.org/media/MPL/2.0/index.815ca599c9df.txt"}},
	{[]string{"permission is hereby granted, free of charge"}, License{Key: "mit", Name: "MIT License", HTMLURL: "http://choosealicense.com/licenses/mit/", SourceURL: "https://opensource.org/licenses/MIT"}},
	{[]string{"redistribution and use in source and binary forms", "neither the name"}, License{Key: "bsd-3-clause", Name: "BSD 3-Clause \"New\" or \"Revised\" License", HTMLURL: "http://choosealicense.com/licenses/bsd-3-clause/", SourceURL: "https://opensource.org/licenses/BSD-3-Clause"}},
	{[]string{"redistribution and use in source and binary forms"}, License{Key: "bsd-2-clause", Name: "BSD 2-Clause \"Simplified\" License", HTMLURL: "http://choosealicense.com/licenses/bsd-2-clause/", SourceURL: "https://opensource.org/licenses/BSD-2-Clause"}},
	{[]string{"this is free and unencumbered software released into the public domain"}, License{Key: "unlicense", Name: "The Unlicense", HTMLURL: "http://choosealicense.com/licenses/unlicense/", SourceURL: "http://unlicense.org/"}},
}

// DetectLicense looks for a license file on the default branch and names
// the license it holds (key "other" when the text is not recognised).
func (s *Service) DetectLicense(ctx context.Context, p model.Project) (*License, error) {
	if p.EmptyRepo {
		return nil, nil
	}
	repo, err := s.storages.Open(p.RepositoryStorage, p.DiskPath)
	if err != nil {
		return nil, err
	}
	return detectLicense(ctx, repo, p.DefaultBranch)
}

func detectLicense(ctx context.Context, repo *gitrepo.Repo, branch string) (*License, error) {
	for _, name := range licenseFiles {
		b, ok, err := repo.ReadFile(ctx, branch, name, 64<<10)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		text := strings.ToLower(strings.Join(strings.Fields(string(b)), " "))
		for _, k := range knownLicenses {
			all := true
			for _, ph := range k.phrases {
				all = all && strings.Contains(text, ph)
			}
			if all {
				l := k.lic
				l.Path = name
				return &l, nil
			}
		}
		return &License{Key: "other", Name: "Other", Path: name}, nil
	}
	return nil, nil
}
