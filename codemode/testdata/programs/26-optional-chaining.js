// want: Ana: Lisbon, dark theme | Dev: unknown city, light theme | user 9: unknown city, light theme
const ids = [1, 4, 9];
const lines = [];
for (const id of ids) {
  let profile;
  try {
    profile = await tools.fetch_json({ url: `https://api.example.com/users/${id}/profile` });
  } catch {
    profile = undefined;
  }
  const city = profile?.address?.city ?? "unknown city";
  const theme = profile?.settings?.theme ?? "light";
  lines.push(`${profile?.name ?? `user ${id}`}: ${city}, ${theme} theme`);
}
return lines.join(" | ");
